#!/usr/bin/env node
// Builds dist/ (tsc -p tsconfig.build.json) only when a source changed since the last build made
// here, so that `npm run clients`, `npm run audit:verify` and the other commands answer at once.
// "Changed": a file or folder under src/, dev/ or migrations/, or a tsconfig, newer than dist/.built-at.
// Where there is no src/ (the production image), it does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pruneDist } from './prune-dist.mjs';

const STAMP = join('dist', '.built-at');
const SOURCES = ['src', 'dev', 'migrations', 'tsconfig.json', 'tsconfig.build.json'];

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A folder's own time changes when a file in it is added, renamed or removed.
  return readdirSync(path).reduce((latest, entry) => Math.max(latest, newest(join(path, entry))), stat.mtimeMs);
}

// Without src/ there is nothing to build from: the production image carries dist/ and these
// scripts, never the sources or the compiler, and its commands run what was built into it.
if (!existsSync('src')) process.exit(0);

const sources = Math.max(...SOURCES.filter((path) => existsSync(path)).map(newest));
if (existsSync(STAMP) && statSync(STAMP).mtimeMs >= sources) process.exit(0);

const started = Date.now();
const tsc = spawnSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
pruneDist();
// Dated when the build began: a source saved while tsc ran is newer, and is built next time.
writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
utimesSync(STAMP, new Date(started), new Date(started));
process.stderr.write(`Built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s (sources changed since the last build).\n`);
