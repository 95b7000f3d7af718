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

  it('when psql is not installed, then it says how to install it, in one line, and exits 1', async () => {
    const onlyNode = mkdtempSync(join(tmpdir(), 'pgw-path-'));
    symlinkSync(process.execPath, join(onlyNode, 'node'));

    const result = await runProcess(PSQL_CLI, [], { ...env(), PATH: onlyNode });

    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('apt-get install postgresql-client')]);
  });
});
