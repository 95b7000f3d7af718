import { spawn, spawnSync } from 'node:child_process';
import { createBaseLogger } from '../../common/runtime/logging';
import { readConfigOrExit } from '../../config/load-config';
import { resolveDatabase } from '../database-handle';

/**
 * `npm run psql [-- --owner] [-- psql arguments]`: psql on the service's database — the embedded one
 * (joined when the service runs, else started for the session) or DATABASE_URL. As the service's
 * role by default, which reads everything and cannot rewrite the audit log; `--owner` connects as
 * the schema's owner (MIGRATIONS_DATABASE_URL, or the embedded cluster's superuser).
 */
async function main(args: string[]): Promise<number> {
  if (spawnSync('psql', ['--version']).error) {
    process.stderr.write('psql is not installed: apt-get install postgresql-client (or brew install libpq).\n');
    return 1;
  }
  const config = readConfigOrExit();
  const log = createBaseLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2);
  const asOwner = args[0] === '--owner';
  const handle = await resolveDatabase(config, { info: (m) => log.info(m), warn: (m) => log.warn(m), debug: (m) => log.debug(m) });
  try {
    const url = asOwner ? (handle.ownerUrl ?? handle.url) : handle.url;
    const psql = spawn('psql', [url, ...(asOwner ? args.slice(1) : args)], { stdio: 'inherit' });
    // Ctrl-C belongs to psql (it cancels the query); the session ends when psql does.
    process.on('SIGINT', () => undefined);
    return await new Promise<number>((resolve) => psql.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    await handle.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`psql: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
