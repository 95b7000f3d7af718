import { AppConfig } from '../config/load-config';
import { acquireEmbeddedDatabase, DatabaseHandle, EmbeddedLog } from './embedded-postgres';

export type { DatabaseHandle } from './embedded-postgres';

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
 * embedded PostgreSQL under DATA_DIR, with its superuser as the owner and a role for the service.
 */
export async function resolveDatabase(config: AppConfig, log: EmbeddedLog): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) {
    return {
      url: config.DATABASE_URL,
      ownerUrl: config.MIGRATIONS_DATABASE_URL,
      description: `external PostgreSQL at ${databaseLocation(config.DATABASE_URL)}`,
      stop: () => Promise.resolve(),
    };
  }
  return acquireEmbeddedDatabase({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT, log });
}
