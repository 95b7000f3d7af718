import { Logger } from '@nestjs/common';
import { DataSource, DataSourceOptions } from 'typeorm';
import { createBaseLogger, ServiceLogger } from '../../common/runtime/logging';
import { AppConfig, loadEnvFile, validateEnvironment } from '../../config/load-config';
import { DatabaseHandle, resolveDatabase } from '../database-handle';
import { migrateAsOwner } from '../database-roles';
import { dataSourceOptions } from '../typeorm-options';

export interface OpenDatabase {
  readonly config: AppConfig;
  readonly handle: DatabaseHandle;
  readonly dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * What every command-line tool needs: validated config, the database (the embedded one is joined
 * when the service runs, started and stopped again when it does not), and a TypeORM data source.
 * Every CLI prints its results as JSON lines on stdout; its messages and logs go to stderr (JSON
 * lines, or human-readable ones at a terminal). `entities`: the ones the tool uses (the
 * schema itself comes from the migrations).
 */
export async function openDatabase(env: NodeJS.ProcessEnv, options: { migrate: boolean; entities?: DataSourceOptions['entities'] }): Promise<OpenDatabase> {
  loadEnvFile();
  const config = validateEnvironment(env);
  const log = createBaseLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2);
  // What the domain services log (the sealer, the retention) goes the same way: stderr, one format.
  Logger.overrideLogger(new ServiceLogger(log));
  const handle = await resolveDatabase(config, {
    info: (m) => log.info(m),
    warn: (m) => log.warn(m),
    debug: (m) => log.debug(m),
  });
  let dataSource: DataSource;
  try {
    dataSource = await new DataSource(dataSourceOptions(handle.url, { poolSize: 2, entities: options.entities })).initialize();
    if (options.migrate && config.MIGRATIONS_RUN) await migrateAsOwner(dataSource, handle.ownerUrl);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return {
    config,
    handle,
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await handle.stop();
    },
  };
}
