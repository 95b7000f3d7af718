import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database';
import { runProcess } from '../support/processes';

const PSQL_CLI = join(process.cwd(), 'dist', 'src', 'database', 'cli', 'psql.cli.js');
const MIGRATE_CLI = join(process.cwd(), 'dist', 'src', 'database', 'cli', 'migrate.cli.js');

/** `npm run psql`: psql on the service's database, as the service's role or as the owner. */
describe('npm run psql', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    const migrated = await runProcess(MIGRATE_CLI, ['run'], env());
    if (migrated.code !== 0) throw new Error(migrated.stderr);
  });
  afterAll(async () => {
    await database.drop();
  });

  const env = () => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: database.url,
    MIGRATIONS_DATABASE_URL: database.ownerUrl,
    DATA_DIR: '/nonexistent',
  });

  it('when run with psql arguments, then psql runs them as the service’s role, which cannot rewrite the audit log', async () => {
    const result = await runProcess(PSQL_CLI, ['-tAc', "select current_user = session_user, has_table_privilege('audit_events', 'UPDATE')"], env());

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toBe('t|f');
  });

  it('when run with --owner, then psql connects as the schema’s owner', async () => {
    const asService = await runProcess(PSQL_CLI, ['-tAc', 'select current_user'], env());
    const asOwner = await runProcess(PSQL_CLI, ['--owner', '-tAc', 'select current_user'], env());

    expect(asOwner.code).toBe(0);
    expect(asOwner.stdout.trim()).toBe(new URL(database.ownerUrl).username);
    expect(asOwner.stdout.trim()).not.toBe(asService.stdout.trim());
  });

  /**
   * psql's own command line, as every user of the machine reads it (`ps`, /proc/<pid>/cmdline):
   * psql's shell escape runs `cat` with psql as its parent. Then psql queries as whom it connected.
   */
  const psqlCommandLine = async (args: string[], environment: NodeJS.ProcessEnv) => {
    const result = await runProcess(PSQL_CLI, [...args, '-tA', '-c', '\\! cat /proc/$PPID/cmdline', '-c', 'select current_user'], environment);
    const end = result.stdout.lastIndexOf('\0');
    return { code: result.code, stderr: result.stderr, argv: result.stdout.slice(0, end).split('\0'), user: result.stdout.slice(end + 1).trim() };
  };

  it('when psql runs, then no password is on its command line, and it connects with the password all the same', async () => {
    const service = new URL(database.url);
    const owner = new URL(database.ownerUrl);
    // The password in the URL's query, as libpq also reads it.
    const inQuery = new URL(database.url);
    inQuery.password = '';
    inQuery.search = `?application_name=psql-test&password=${service.password}`;

    const asService = await psqlCommandLine([], env());
    const asOwner = await psqlCommandLine(['--owner'], env());
    const fromQuery = await psqlCommandLine([], { ...env(), DATABASE_URL: inQuery.toString() });

    // The service's role always has a password here (the embedded cluster's, or the external run's role).
    expect(service.password).not.toBe('');
    expect(asService).toMatchObject({ code: 0, stderr: '', user: service.username });
    expect(asService.argv[0]).toMatch(/(^|\/)psql$/);
    expect(asService.argv[1]).toBe(`${service.protocol}//${service.username}@${service.host}${service.pathname}`);
    // Anywhere but as the user name (a role's password may equal its name, as the external run's does).
    const besidesUser = (argv: string[], url: URL) => argv.join(' ').split(`${url.username}@`).join('@');
    expect(besidesUser(asService.argv, service)).not.toContain(decodeURIComponent(service.password));
    expect(asOwner).toMatchObject({ code: 0, stderr: '', user: owner.username });
    expect(asOwner.argv[1]).toBe(`${owner.protocol}//${owner.username}@${owner.host}${owner.pathname}`);
    if (owner.password !== '') expect(besidesUser(asOwner.argv, owner)).not.toContain(decodeURIComponent(owner.password));
    expect(fromQuery).toMatchObject({ code: 0, stderr: '', user: service.username });
    expect(fromQuery.argv[1]).toBe(`${service.protocol}//${service.username}@${service.host}${service.pathname}?application_name=psql-test`);
  });

  it('when psql is not installed, then it says how to install it, in one line, and exits 1', async () => {
    const onlyNode = mkdtempSync(join(tmpdir(), 'pgw-path-'));
    symlinkSync(process.execPath, join(onlyNode, 'node'));

    const result = await runProcess(PSQL_CLI, [], { ...env(), PATH: onlyNode });

    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('apt-get install postgresql-client')]);
  });
});
