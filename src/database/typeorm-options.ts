import { Logger as EngineNestLogger } from '@nestjs/common';
import { Logger as JobEngineLogger, runMigrations as installJobEngine } from 'graphile-worker';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index';

/** `entities`: the application's (src/entities.ts) or, for a tool, the few it uses. */
export function dataSourceOptions(
  url: string,
  { poolSize = 10, entities = [] }: { poolSize?: number; entities?: DataSourceOptions['entities'] } = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: 'partner-gateway',
    extra: { max: poolSize, connectionTimeoutMillis: 5000 },
  };
}

const engineLogger = new EngineNestLogger('JobEngine');

/** The database a data source connects to. */
function urlOf(dataSource: DataSource): string {
  const { url } = dataSource.options as { url?: string };
  if (!url) throw new Error('The data source has no URL');
  return url;
}

/** The job engine's own log lines at warning and above, through the service's logger. */
export const quietJobEngineLogger = new JobEngineLogger((scope) => (level, message, meta) => {
  if (level === 'error' || level === 'warning') engineLogger.warn({ scope, ...meta }, message);
});

/** An arbitrary constant: the key of the advisory lock that serialises migrations across replicas. */
export const MIGRATION_LOCK_KEY = 7_204_118_553;

/** How often a replica waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 200;

/**
 * Applies pending migrations, each in its own transaction (or none, where a migration says so),
 * while holding a session advisory lock so that replicas starting together apply them once.
 * Returns the names applied.
 *
 * The others wait for the lock by asking again, not in a blocked statement: a blocked statement
 * holds a snapshot, and a migration that builds an index CONCURRENTLY waits for every snapshot in
 * the database to end, while the blocked replica waits for its lock: neither would ever go on.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    for (;;) {
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY])) as { locked: boolean }[];
      if (locked) break;
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
    }
    // The job engine's schema (graphile_worker), which the migrations' triggers enqueue into: its own
    // migrations, as its documentation has them run, by the same role and under the same lock.
    await installJobEngine({ connectionString: urlOf(dataSource), logger: quietJobEngineLogger });
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}
