import { spawn, spawnSync } from 'node:child_process';
import { createBaseLogger } from '../../common/runtime/logging';
import { readConfigOrExit } from '../../config/load-config';
import { resolveDatabase } from '../database-handle';

/**
 * A connection URL split in two: the URL without its password (psql's argument, which every user of
 * the machine reads in `ps`) and the password (the child's PGPASSWORD, which only its own user and
 * root read, in /proc/<pid>/environ). libpq takes the password from the user part or from a
 * `password` query parameter, percent-encoded either way: both are taken out.
 */
function splitPassword(url: string): { url: string; password?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // DATABASE_URL is validated as a postgres:// URL before this: nothing else reaches here.
    throw new Error('the database URL cannot be parsed');
  }
  let password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  parsed.password = '';
  if (parsed.search !== '') {
    // Kept as written (not re-encoded by URLSearchParams, whose `+` is not libpq's).
    const kept: string[] = [];
    for (const pair of parsed.search.slice(1).split('&')) {
      const eq = pair.indexOf('=');
      if (eq >= 0 && decodeURIComponent(pair.slice(0, eq)) === 'password') password = decodeURIComponent(pair.slice(eq + 1));
      else if (pair !== '') kept.push(pair);
    }
    parsed.search = kept.length > 0 ? `?${kept.join('&')}` : '';
  }
  return { url: parsed.toString(), password };
}

/**
 * `npm run psql [-- --owner] [-- psql arguments]`: psql on the service's database — the embedded one
 * (joined when the service runs, else started for the session) or DATABASE_URL. As the service's
 * role by default, which reads everything and cannot rewrite the audit log; `--owner` connects as
 * the schema's owner (MIGRATIONS_DATABASE_URL, or the embedded cluster's superuser). The password
 * never reaches psql's command line: it goes in the child's environment (see splitPassword).
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
    const { url, password } = splitPassword(asOwner ? (handle.ownerUrl ?? handle.url) : handle.url);
    const env = password === undefined ? process.env : { ...process.env, PGPASSWORD: password };
    const psql = spawn('psql', [url, ...(asOwner ? args.slice(1) : args)], { stdio: 'inherit', env });
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
