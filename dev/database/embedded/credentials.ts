import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Client } from 'pg';
import { POSTGRES_USER } from './ownership';

/**
 * The cluster's logins, generated once and kept beside it (mode 600): the superuser, which owns
 * the schema and runs the migrations, and the service's own role (see database-roles.ts).
 */
export interface Credentials {
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly serviceUser: string;
  readonly servicePassword: string;
}

const DATABASE_NAME = 'partner_gateway';
const SERVICE_USER = 'partner_gateway_service';

export function readCredentials(file: string): Credentials {
  const stored = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>) : {};
  const credentials: Credentials = {
    user: stored.user ?? POSTGRES_USER,
    password: stored.password ?? randomBytes(24).toString('base64url'),
    database: stored.database ?? DATABASE_NAME,
    // Data directories made before the service had a role of its own get one now.
    serviceUser: stored.serviceUser ?? SERVICE_USER,
    servicePassword: stored.servicePassword ?? randomBytes(24).toString('base64url'),
  };
  if (stored.servicePassword === undefined) writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  return credentials;
}

/** The superuser's URL (the owner's), or with `as: 'service'` the service role's. */
export function urlFor(credentials: Credentials, port: number, database = credentials.database, as: 'owner' | 'service' = 'owner'): string {
  const user = encodeURIComponent(as === 'service' ? credentials.serviceUser : credentials.user);
  const password = encodeURIComponent(as === 'service' ? credentials.servicePassword : credentials.password);
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
  }
  try {
    // The service's role: a login with no rights of its own; the migrations grant it what it needs.
    const role = client.escapeIdentifier(credentials.serviceUser);
    const password = client.escapeLiteral(credentials.servicePassword);
    const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [credentials.serviceUser]);
    if (exists.rowCount === 0) await client.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${password}`);
  } catch (error) {
    // Two processes starting at once may both try to create it.
    if ((error as { code?: string }).code !== '42710') throw error;
  } finally {
    await client.end();
  }
}
