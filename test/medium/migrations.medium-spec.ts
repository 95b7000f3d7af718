import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index';
import { DATABASE_SET_COLUMNS, migrateAsOwner, SERVICE_PRIVILEGES } from '../../src/database/database-roles';
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

  /** As the schema's owner, unless `asService`. */
  async function connect(asService = false): Promise<DataSource> {
    const dataSource = await new DataSource(dataSourceOptions(asService ? database.url : database.ownerUrl, { poolSize: 2, entities: ENTITIES })).initialize();
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

  it('when the reference and customer indexes’ migration stopped after its first index was replaced, then running it again keeps that index and finishes the other', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);
    const indexOid = async (name: string): Promise<number | null> => {
      const [row]: { oid: number | null }[] = await dataSource.query('SELECT to_regclass($1)::oid AS oid', [name]);
      return row.oid;
    };
    // As a run interrupted between the two: the reference's new index built and its old one gone, the customer's not yet, nothing recorded.
    await dataSource.query(`DELETE FROM schema_migrations WHERE name = 'AuditSearchesApart1765094400000'`);
    await dataSource.query('DROP INDEX "audit_events_by_customer_idx"');
    await dataSource.query(`CREATE INDEX "audit_events_customer_idx" ON "audit_events" ("customer_id", "occurred_at", "id") WHERE customer_id IS NOT NULL`);
    const referenceIndex = await indexOid('audit_events_by_reference_idx');

    expect(await runMigrations(dataSource)).toEqual(['AuditSearchesApart1765094400000']);

    expect(referenceIndex).not.toBeNull();
    expect(await indexOid('audit_events_by_reference_idx')).toBe(referenceIndex);
    expect(await indexOid('audit_events_by_customer_idx')).not.toBeNull();
    expect(await indexOid('audit_events_customer_idx')).toBeNull();
    expect(await indexOid('audit_events_reference_idx')).toBeNull();
  });

  it('when a token hash or an active name is duplicated, then the database refuses it', async () => {
    const dataSource = await connect();
    await runMigrations(dataSource);
    const insert = (id: string, name: string, hash: string, revoked: string | null = null) =>
      dataSource.query(`INSERT INTO api_clients (id, name, role, tenant, token_hash, revoked_at) VALUES ($1, $2, 'partner', 'default', $3, $4)`, [
        id,
        name,
        hash,
        revoked,
      ]);
    await insert('00000000-0000-4000-8000-000000000001', 'a', 'a'.repeat(64), new Date().toISOString());
    await insert('00000000-0000-4000-8000-000000000002', 'a', 'b'.repeat(64));

    await expect(insert('00000000-0000-4000-8000-000000000003', 'a', 'c'.repeat(64))).rejects.toThrow(/api_clients_active_name_key/);
    await expect(insert('00000000-0000-4000-8000-000000000004', 'b', 'b'.repeat(64))).rejects.toThrow(/api_clients_token_hash_key/);
  });

  it('when the owner migrates for the service’s role, then every table is granted exactly what SERVICE_PRIVILEGES names, and every table is named there', async () => {
    const service = await connect(true);

    await migrateAsOwner(service, database.ownerUrl);

    const owner = await connect();
    const [{ role }]: { role: string }[] = await service.query('SELECT current_user AS role');
    const grants: { table_name: string; privilege_type: string }[] = await owner.query(
      `SELECT table_name, privilege_type FROM information_schema.role_table_grants WHERE grantee = $1 AND table_schema = 'public'`,
      [role],
    );
    const granted: Record<string, string> = {};
    for (const table of new Set(grants.map((g) => g.table_name))) {
      granted[table] = grants
        .filter((g) => g.table_name === table)
        .map((g) => g.privilege_type)
        .sort()
        .join(', ');
    }
    // INSERT on a table with columns the database sets is granted column by column: every column but those.
    const columnGrants: { table_name: string; column_name: string }[] = await owner.query(
      `SELECT table_name, column_name FROM information_schema.role_column_grants
        WHERE grantee = $1 AND table_schema = 'public' AND privilege_type = 'INSERT'
          AND NOT has_table_privilege($1, format('%I.%I', table_schema, table_name), 'INSERT')`,
      [role],
    );
    for (const table of new Set(columnGrants.map((g) => g.table_name))) {
      granted[table] = [...(granted[table] ?? '').split(', ').filter(Boolean), 'INSERT'].sort().join(', ');
    }
    const expected = Object.fromEntries(Object.entries(SERVICE_PRIVILEGES).map(([table, privileges]) => [table, privileges.split(', ').sort().join(', ')]));
    expect(granted).toEqual(expected);
    const allColumns: { column_name: string }[] = await owner.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'audit_events'`,
    );
    expect(
      columnGrants
        .filter((g) => g.table_name === 'audit_events')
        .map((g) => g.column_name)
        .sort(),
    ).toEqual(
      allColumns
        .map((c) => c.column_name)
        .filter((c) => !DATABASE_SET_COLUMNS.audit_events.includes(c))
        .sort(),
    );
    expect(DATABASE_SET_COLUMNS.audit_events).toEqual(['occurred_at', 'tx']);
    expect((await tables(owner)).sort()).toEqual(Object.keys(SERVICE_PRIVILEGES).sort());
    const [{ may }]: { may: boolean }[] = await owner.query(
      `SELECT has_function_privilege($1, 'purge_sealed_audit_events(timestamptz, integer)', 'EXECUTE') AS may`,
      [role],
    );
    expect(may).toBe(true);
  });

  it('when three replicas migrate and grant at the same moment, then every one starts and the grants are whole', async () => {
    const replicas = await Promise.all([connect(true), connect(true), connect(true)]);

    await Promise.all(replicas.map((service) => migrateAsOwner(service, database.ownerUrl)));

    const [{ may }]: { may: boolean }[] = await replicas[0].query(
      `SELECT has_column_privilege('audit_events', 'request_id', 'INSERT') AND NOT has_column_privilege('audit_events', 'occurred_at', 'INSERT')
              AND NOT has_table_privilege('audit_events', 'UPDATE') AND has_function_privilege('append_audit_checkpoint(text, varchar, bytea, bytea)', 'EXECUTE') AS may`,
    );
    expect(may).toBe(true);
  });

  it('when a role that was granted nothing calls the purge, then the database refuses it', async () => {
    const owner = await connect();
    await runMigrations(owner);
    const service = await connect(true);

    await expect(service.query(`SELECT * FROM purge_sealed_audit_events(now() - interval '400 days', 10)`)).rejects.toThrow(/permission denied/);
  });
});
