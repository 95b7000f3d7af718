import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Client } from 'pg';
import { POSTGRES_USER } from './ownership';

/** The cluster's login, generated once and kept beside it (mode 600). */
export interface Credentials {
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

const DATABASE_NAME = 'partner_gateway';

export function readCredentials(file: string): Credentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const created: Credentials = {
    user: POSTGRES_USER,
    password: randomBytes(24).toString('base64url'),
    database: DATABASE_NAME,
  };
  writeFileSync(file, JSON.stringify(created, null, 2) + '\n', { mode: 0o600 });
  return created;
}

export function urlFor(credentials: Credentials, port: number, database = credentials.database): string {
  const user = encodeURIComponent(credentials.user);
  const password = encodeURIComponent(credentials.password);
  return `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
}

export async function ensureDatabase(credentials: Credentials, port: number): Promise<void> {
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
