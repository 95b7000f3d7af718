import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export interface TestDatabase {
  /** As the service's own role (DATABASE_URL): INSERT and SELECT on the audit log, and so on. */
  readonly url: string;
  /** As the schema's owner (MIGRATIONS_DATABASE_URL), a superuser here. */
  readonly ownerUrl: string;
  readonly name: string;
  drop(): Promise<void>;
  /**
   * Takes the database away from its users as a stopped server would: open connections are
   * killed and new ones refused. The server itself stays up for the other suites sharing it.
   */
  goDown(): Promise<void>;
  /** Accepts connections again. */
  comeBack(): Promise<void>;
}

function serverUrl(variable = 'TEST_POSTGRES_URL'): string {
  const url = process.env[variable];
  if (!url) throw new Error(`${variable} is not set: run the e2e project through jest (global setup).`);
  return url;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(serverUrl(), 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the test server: no tables, no migrations applied. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `pgw_test_${randomBytes(6).toString('hex')}`;
  await onServer((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: withDatabase(serverUrl('TEST_SERVICE_URL'), name),
    ownerUrl: withDatabase(serverUrl(), name),
    drop: () => onServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    goDown: () =>
      onServer(async (client) => {
        await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      }),
    comeBack: () => onServer((client) => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)).then(() => undefined),
  };
}
