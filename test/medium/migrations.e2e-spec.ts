import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index';
import { dataSourceOptions, runMigrations } from '../../src/database/typeorm-options';
import { ENTITIES } from '../../src/entities';
import { createTestDatabase, TestDatabase } from '../support/database';

async function tables(dataSource: DataSource): Promise<string[]> {
  const rows: { table_name: string }[] = await dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

describe('migrations', () => {
  let database: TestDatabase;
  const open: DataSource[] = [];

  async function connect(): Promise<DataSource> {
    const dataSource = await new DataSource(dataSourceOptions(database.url, { poolSize: 2, entities: ENTITIES })).initialize();
    open.push(dataSource);
    return dataSource;
  }

  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((d) => d.destroy()));
    await database.drop();
  });

  it('when run on an empty database, then every migration is applied in order and the tables exist', async () => {
    const dataSource = await connect();
    expect(await tables(dataSource)).toEqual([]);

    const applied = await runMigrations(dataSource);

    expect(applied).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await tables(dataSource)).toEqual(expect.arrayContaining(['api_clients', 'schema_migrations']));
  });

  it('when every migration has run, then the entities and the schema agree (nothing left to generate)', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);

    const pending = await dataSource.driver.createSchemaBuilder().log();

    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('when run again, then nothing is applied twice', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);

    expect(await runMigrations(dataSource)).toEqual([]);
  });

  it('when two replicas migrate at the same moment, then each migration is applied exactly once', async () => {
    const [first, second] = await Promise.all([connect(), connect()]);

    const [a, b] = await Promise.all([runMigrations(first), runMigrations(second)]);

    expect([...a, ...b]).toEqual(MIGRATIONS.map((m) => m.name));
    const recorded: { name: string }[] = await first.query('SELECT name FROM schema_migrations');
    expect(recorded).toHaveLength(MIGRATIONS.length);
  });

  it('when every migration is reverted, newest first, then only the migrations table is left, and re-applying restores the schema', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);
    const full = await tables(dataSource);

    for (let i = 0; i < MIGRATIONS.length; i += 1) await dataSource.undoLastMigration({ transaction: 'each' });
    const afterRevert = await tables(dataSource);
    await runMigrations(dataSource);

    expect(afterRevert).toEqual(['schema_migrations']);
    expect(await tables(dataSource)).toEqual(full);
    expect(full).toEqual(expect.arrayContaining(['api_clients', 'audit_events']));
  });

  it('when a token hash or an active name is duplicated, then the database refuses it', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);
    const insert = (id: string, name: string, hash: string, revoked: string | null = null) =>
      dataSource.query(
        `INSERT INTO api_clients (id, name, role, tenant, token_hash, revoked_at) VALUES ($1, $2, 'partner', 'default', $3, $4)`,
        [id, name, hash, revoked],
      );
    await insert('00000000-0000-4000-8000-000000000001', 'a', 'a'.repeat(64), new Date().toISOString());
    await insert('00000000-0000-4000-8000-000000000002', 'a', 'b'.repeat(64));

    await expect(insert('00000000-0000-4000-8000-000000000003', 'a', 'c'.repeat(64))).rejects.toThrow(/api_clients_active_name_key/);
    await expect(insert('00000000-0000-4000-8000-000000000004', 'b', 'b'.repeat(64))).rejects.toThrow(/api_clients_token_hash_key/);
  });
});
