#!/usr/bin/env node
// Removes what tsc compiled from a source that is no longer there: tsc writes dist/ but never
// deletes from it, so a moved or deleted file's old .js would still load locally (and hide a stale
// import) while a fresh clone fails. Run after every build (npm run build, build-if-changed).
import { existsSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const OUTPUT = /\.(?:js|js\.map|d\.ts|d\.ts\.map)$/;

/** Prunes dist/<root>/ for each source root; returns the files removed (paths relative to cwd). */
export function pruneDist(roots = ['src', 'dev', 'migrations'], dist = 'dist') {
  const removed = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
        if (readdirSync(path).length === 0) rmdirSync(path);
      } else if (OUTPUT.test(entry)) {
        const source = relative(dist, path).replace(OUTPUT, '.ts');
        if (!existsSync(source)) {
          rmSync(path);
          removed.push(path);
        }
      }
    }
  };
  for (const root of roots) if (existsSync(join(dist, root))) walk(join(dist, root));
  return removed;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const removed = pruneDist();
  if (removed.length > 0) process.stderr.write(`Removed ${removed.length} compiled files whose source is gone from dist/.\n`);
}
