import { Logger } from '@nestjs/common';
import { DataSource, DataSourceOptions } from 'typeorm';
import { createBaseLogger, ServiceLogger } from '../../common/runtime/logging';
import { GatewaySettings, loadEnvFile, validateEnvironment } from '../../config/load-config';
import type { LogLevel } from '../../config/environment/raw-environment';
import { DatabaseHandle, resolveDatabase } from '../database-handle';
import { migrateAsOwner } from '../database-roles';
import { dataSourceOptions } from '../typeorm-options';

/** A command's log is quiet: warnings and errors, unless LOG_LEVEL asks for debug or trace. */
function commandLineLevel(level: string | undefined): LogLevel {
  return level === 'debug' || level === 'trace' ? level : 'warn';
}

const EXIT_ON = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * For a command's entry point (a process of its own):
 * - what the domain services log during the command (the sealer, the retention) goes where the
 *   command's own log goes — stderr, in the same format — and never to Nest's coloured console;
 * - an interrupt (Ctrl-C, SIGTERM, a closed terminal) ends the command with the shell's exit code,
 *   through process.exit, so that an embedded PostgreSQL the command started is stopped too (its
 *   'exit' last resort): the server runs in a process group of its own, and the terminal's Ctrl-C
 *   no longer reaches it.
 */
export function setUpCommandLineProcess(): void {
  Logger.overrideLogger(new ServiceLogger(createBaseLogger(commandLineLevel(process.env.LOG_LEVEL), 2)));
  for (const [signal, code] of Object.entries(EXIT_ON)) process.once(signal, () => process.exit(code));
}

export interface OpenDatabase {
  readonly config: GatewaySettings;
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
  const log = createBaseLogger(commandLineLevel(config.LOG_LEVEL), 2);
  const handle = await resolveDatabase(config, {
    info: (m) => log.info(m),
    warn: (m) => log.warn(m),
    debug: (m) => log.debug(m),
  });
  let dataSource: DataSource;
  try {
    dataSource = await new DataSource(dataSourceOptions(handle.url, { poolSize: 2, entities: options.entities })).initialize();
    if (options.migrate && config.MIGRATIONS_RUN) await migrateAsOwner(dataSource, handle.ownerUrl, { auditRetentionDays: config.AUDIT_RETENTION_DAYS });
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
