import type { DatabaseEnvironment } from '../config/environment/database.environment';
import type { ServiceEnvironment } from '../config/environment/service.environment';
import { ConfigurationError } from '../config/load-config';

/** The database a process uses: the service's role, the owner's, and how to let go of it. */
export interface DatabaseHandle {
  /** The service's own role (DATABASE_URL). */
  readonly url: string;
  /** The schema owner's, when it is another role: the migrations run with it. */
  readonly ownerUrl?: string;
  /** Where the database came from, for the start-up log (never the password). */
  readonly description: string;
  /** Stops a server this process started (development's embedded one); a no-op otherwise. */
  stop(): Promise<void>;
}

/** Where a database's start-up speaks (the service's logger, or a command's stderr). */
export interface DatabaseLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

/** A database for a checkout that names none: development tooling's embedded PostgreSQL (dev/). */
export type LocalDatabase = (config: Pick<ServiceEnvironment, 'DATA_DIR'>, log: DatabaseLog) => Promise<DatabaseHandle>;

let localDatabase: LocalDatabase | undefined;

/**
 * Development tooling offers its database for when DATABASE_URL is not set: `npm start`
 * (dev/main.ts) and, in a checkout, the npm commands (scripts/local-database.cjs
 * loads dev/local-database.ts first). The service itself never reaches into dev/: in the production
 * image nothing offers one, and DATABASE_URL is required.
 */
export function offerLocalDatabase(database: LocalDatabase): void {
  localDatabase = database;
}

/** host:port/database of a connection URL, without user or password, for logs. */
export function databaseLocation(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * DATABASE_URL (and MIGRATIONS_DATABASE_URL, the owner) when set: nothing is started. Else the
 * local database development tooling offered (the embedded PostgreSQL under DATA_DIR, with its
 * superuser as the owner and a role for the service); without one, a configuration error.
 */
export async function resolveDatabase(
  config: Pick<DatabaseEnvironment, 'DATABASE_URL' | 'MIGRATIONS_DATABASE_URL'> & Pick<ServiceEnvironment, 'DATA_DIR'>,
  log: DatabaseLog,
): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) {
    return {
      url: config.DATABASE_URL,
      ownerUrl: config.MIGRATIONS_DATABASE_URL,
      description: `external PostgreSQL at ${databaseLocation(config.DATABASE_URL)}`,
      stop: () => Promise.resolve(),
    };
  }
  if (!localDatabase) {
    throw new ConfigurationError([
      'DATABASE_URL is required: the embedded PostgreSQL is development tooling, which `npm start` and the npm commands of a checkout start, and this build has none',
    ]);
  }
  return localDatabase(config, log);
}
