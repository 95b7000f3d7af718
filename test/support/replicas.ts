import { join } from 'node:path';
import { runClientsCli } from '../../src/auth/cli/clients.command';
import { generateSandboxKeys } from '../../src/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../src/sandbox/sandbox.runner';
import { TEST_AUDIT_SIGNING_KEY } from './app';
import { createTestDatabase, TestDatabase } from './database';
import { cleanEnv, freePort, removeDataDir, scratchDataDir, startProcess, Started, waitForOutput } from './processes';

const MAIN = join(process.cwd(), 'dist', 'src', 'main.js');

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
  close(): Promise<void>;
}

let clients = 0;

export async function startReplicas(count: number, env: Record<string, string> = {}): Promise<ReplicaSet> {
  const sandbox = await startSandbox({ port: 0, keys: generateSandboxKeys(), journalLimit: 100_000 });
  const database = await createTestDatabase();
  const dataDirs: string[] = [];
  const replicas: Replica[] = [];
  const close = async () => {
    for (const replica of replicas) replica.process.child.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.process.exited));
    await Promise.all(dataDirs.map((dir) => removeDataDir(dir)));
    await sandbox.close();
    await database.drop();
  };
  try {
    const starting = Array.from({ length: count }, async (_, i) => {
      const port = await freePort();
      const dataDir = scratchDataDir();
      dataDirs.push(dataDir);
      const started = startProcess(
        MAIN,
        [],
        cleanEnv({
          NODE_ENV: 'production',
          LOG_LEVEL: 'info',
          PORT: String(port),
          DATA_DIR: dataDir,
          DATABASE_URL: database.url,
          MIGRATIONS_DATABASE_URL: database.ownerUrl,
          UPSTREAM_BASE_URL: sandbox.baseUrl,
          UPSTREAM_BEARER_TOKEN: sandbox.bearerToken,
          UPSTREAM_PUBLIC_KEY: sandbox.publicKeyPem,
          AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY,
          ...env,
        }),
      );
      const replica = { name: String.fromCharCode(65 + i), base: `http://127.0.0.1:${port}`, process: started };
      replicas.push(replica);
      await waitForOutput(started, /Partner gateway listening/);
      return replica;
    });
    const ready = await Promise.all(starting);
    replicas.splice(0, replicas.length, ...ready);
  } catch (error) {
    await close();
    throw error;
  }
  const cliEnv = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
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
    close,
  };
}
