import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runClientsCli } from '../../src/auth/cli/clients.command';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../dev/sandbox/sandbox.runner';
import { TEST_AUDIT_SIGNING_KEY } from './app';

/** The end users' pseudonym key the replicas share. */
const TEST_PSEUDONYM_KEY = randomBytes(32).toString('hex');
const TEST_DATA_KEY = randomBytes(32).toString('base64');
import { createTestDatabase, TestDatabase } from './database';
import { cleanEnv, portPrinted, removeDataDir, scratchDataDir, startProcess, Started, waitForOutput } from './processes';

const MAIN = join(process.cwd(), 'dist', 'src', 'main.js');
const WORKER = join(process.cwd(), 'dist', 'src', 'worker.js');

export interface Replica {
  readonly name: string;
  readonly base: string;
  readonly process: Started;
}

/**
 * Gateway processes as an operator runs them behind a load balancer: the built service, each on
 * its own port and DATA_DIR, sharing one PostgreSQL (the service's role and the owner's), one
 * audit signing key, one provider (a sandbox on loopback, real HTTP) and, when given, one Redis.
 */
export interface ReplicaSet {
  readonly replicas: readonly Replica[];
  readonly sandbox: RunningSandbox;
  readonly database: TestDatabase;
  /** Environment for the command-line tools against the same database. */
  readonly cliEnv: NodeJS.ProcessEnv;
  /** Makes an API client through `npm run clients` and returns its token. */
  createClient(role: 'partner' | 'admin', tenant?: string): Promise<string>;
  /** Starts a worker (`node dist/src/worker.js`) with the replicas' settings and `env`; closed with them. */
  startWorker(env?: Record<string, string>): Promise<Started>;
  close(): Promise<void>;
}

let clients = 0;

export async function startReplicas(count: number, env: Record<string, string> = {}): Promise<ReplicaSet> {
  const sandbox = await startSandbox({ port: 0, keys: generateSandboxKeys(), journalLimit: 100_000 });
  const database = await createTestDatabase();
  const dataDirs: string[] = [];
  const replicas: Replica[] = [];
  /** Every process started, ready or not, so that a failed start still stops them all. */
  const processes: Started[] = [];
  const envOf = (dataDir: string, extra: Record<string, string> = {}) =>
    cleanEnv({
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      // A port of its own choosing, read from what it prints: ports picked beforehand and left
      // unbound until each replica starts could be handed to two of them.
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      MIGRATIONS_DATABASE_URL: database.ownerUrl,
      UPSTREAM_BASE_URL: sandbox.baseUrl,
      UPSTREAM_BEARER_TOKEN: sandbox.bearerToken,
      UPSTREAM_PUBLIC_KEY: sandbox.publicKeyPem,
      AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY,
      // Production requires the key every replica shares.
      END_USER_PSEUDONYM_KEY: TEST_PSEUDONYM_KEY,
      DATA_KEY: TEST_DATA_KEY,
      ...env,
      ...extra,
    });
  const close = async () => {
    for (const started of processes) started.child.kill('SIGKILL');
    await Promise.all(processes.map((started) => started.exited));
    await Promise.all(dataDirs.map((dir) => removeDataDir(dir)));
    await sandbox.close();
    await database.drop();
  };
  try {
    const starting = Array.from({ length: count }, async (_, i) => {
      const dataDir = scratchDataDir();
      dataDirs.push(dataDir);
      const started = startProcess(MAIN, [], envOf(dataDir));
      processes.push(started);
      await waitForOutput(started, /Partner gateway listening/);
      return { name: String.fromCharCode(65 + i), base: `http://127.0.0.1:${portPrinted(started, 'Partner gateway listening', 'url')}`, process: started };
    });
    const ready = await Promise.all(starting);
    replicas.push(...ready);
  } catch (error) {
    await close();
    throw error;
  }
  // As an operator runs the commands: the owner's URL beside the service's (clients are the owner's to change).
  const cliEnv = { DATABASE_URL: database.url, MIGRATIONS_DATABASE_URL: database.ownerUrl, LOG_LEVEL: 'warn' };
  return {
    replicas,
    sandbox,
    database,
    cliEnv,
    async createClient(role, tenant = 'default') {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runClientsCli(['create', '--name', `${role}-${++clients}-${process.pid}`, '--role', role, '--tenant', tenant], cliEnv, {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
      });
      if (code !== 0) throw new Error(`clients create exited ${code}: ${err.join('\n')}`);
      return (JSON.parse(out[0]) as { token: string }).token;
    },
    async startWorker(extra = {}) {
      const dataDir = scratchDataDir();
      dataDirs.push(dataDir);
      const started = startProcess(WORKER, [], envOf(dataDir, extra));
      processes.push(started);
      await waitForOutput(started, /Partner gateway worker running/);
      return started;
    },
    close,
  };
}
