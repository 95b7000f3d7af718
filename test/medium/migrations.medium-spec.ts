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

/** Reverts the newest migrations, newest first, down to and including `name`. */
async function undoThrough(dataSource: DataSource, name: string): Promise<void> {
  for (;;) {
    const [newest] = await dataSource.query<{ name: string }[]>('SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1');
    await dataSource.undoLastMigration({ transaction: 'each' });
    if (newest.name === name) return;
  }
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

  /** The audit log's indexes by name: each one's oid, whether it is valid, and its definition. */
  async function indexes(dataSource: DataSource): Promise<Record<string, { oid: number; valid: boolean; definition: string }>> {
    const rows: { name: string; oid: number; valid: boolean; definition: string }[] = await dataSource.query(
      `SELECT c.relname AS name, c.oid, i.indisvalid AS valid, pg_get_indexdef(c.oid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'audit_events'::regclass`,
    );
    return Object.fromEntries(rows.map(({ name, ...index }) => [name, index]));
  }

  describe('the indexes that keep the searches of the audit log apart (AuditSearchesApart), run again after an interruption', () => {
    const MIGRATION = 'AuditSearchesApart1765094400000';

    /** Migrated, then put back as a run that stopped before the customer's index: nothing recorded. */
    async function stoppedBeforeTheCustomerIndex() {
      const dataSource = await connect();
      await runMigrations(dataSource);
      const whole = await indexes(dataSource);
      await dataSource.query('DELETE FROM schema_migrations WHERE name = $1', [MIGRATION]);
      await dataSource.query('DROP INDEX "audit_events_by_customer_idx"');
      return { dataSource, whole };
    }

    it('when the first index was built and the second not, then the first is kept as it is and the second is built', async () => {
      const { dataSource, whole } = await stoppedBeforeTheCustomerIndex();

      expect(await runMigrations(dataSource)).toEqual([MIGRATION]);

      const after = await indexes(dataSource);
      expect(after.audit_events_by_reference_idx.oid).toBe(whole.audit_events_by_reference_idx.oid);
      expect(after.audit_events_by_customer_idx).toEqual({ ...whole.audit_events_by_customer_idx, oid: expect.any(Number) });
    });

    it('when a build was left invalid, then it is built again, valid and as the migration defines it', async () => {
      const { dataSource, whole } = await stoppedBeforeTheCustomerIndex();
      // A build that fails half-way leaves its index invalid under its name: a unique one over a customer's two events.
      const customer = '00000000-0000-4000-8000-0000000000c1';
      await dataSource.query(
        `INSERT INTO audit_events (id, request_id, operation, phase, customer_id)
         VALUES (gen_random_uuid(), 'r1', 'balance.read', 'succeeded', $1), (gen_random_uuid(), 'r2', 'balance.read', 'succeeded', $1)`,
        [customer],
      );
      await expect(dataSource.query('CREATE UNIQUE INDEX CONCURRENTLY "audit_events_by_customer_idx" ON "audit_events" ("customer_id")')).rejects.toThrow();
      expect((await indexes(dataSource)).audit_events_by_customer_idx.valid).toBe(false);

      expect(await runMigrations(dataSource)).toEqual([MIGRATION]);

      expect((await indexes(dataSource)).audit_events_by_customer_idx).toEqual({ ...whole.audit_events_by_customer_idx, oid: expect.any(Number) });
    });
  });

  describe('the reference and customer indexes that AuditSearchesApart replaced (DropSupersededAuditIndexes)', () => {
    const MIGRATION = 'DropSupersededAuditIndexes1765180800000';
    const SUPERSEDED = ['audit_events_reference_idx', 'audit_events_customer_idx'];
    const indexNames = async (dataSource: DataSource): Promise<string[]> => Object.keys(await indexes(dataSource));

    it('when every migration has run, then the superseded indexes are gone and the ones that replaced them are there', async () => {
      const dataSource = await connect();
      await runMigrations(dataSource);

      const names = await indexNames(dataSource);
      expect(names).toEqual(expect.arrayContaining(['audit_events_by_reference_idx', 'audit_events_by_customer_idx']));
      expect(names.filter((name) => SUPERSEDED.includes(name))).toEqual([]);
    });

    it('when a run stopped after the first index was dropped, then running it again drops the second', async () => {
      const dataSource = await connect();
      await runMigrations(dataSource);
      await dataSource.query('DELETE FROM schema_migrations WHERE name = $1', [MIGRATION]);
      await dataSource.query(`CREATE INDEX "audit_events_customer_idx" ON "audit_events" ("customer_id", "occurred_at", "id") WHERE customer_id IS NOT NULL`);

      expect(await runMigrations(dataSource)).toEqual([MIGRATION]);

      expect((await indexNames(dataSource)).filter((name) => SUPERSEDED.includes(name))).toEqual([]);
    });

    it('when an index that replaces them is not there, then it drops nothing and says why', async () => {
      const dataSource = await connect();
      await runMigrations(dataSource);
      await undoThrough(dataSource, MIGRATION);
      await dataSource.query('DROP INDEX "audit_events_by_customer_idx"');

      await expect(runMigrations(dataSource)).rejects.toThrow(/audit_events_by_customer_idx must both be there and valid/);

      expect((await indexNames(dataSource)).filter((name) => SUPERSEDED.includes(name)).sort()).toEqual([...SUPERSEDED].sort());
    });

    it('when it is reverted, then the two indexes are back as they were', async () => {
      const dataSource = await connect();
      await runMigrations(dataSource);

      await undoThrough(dataSource, MIGRATION);

      const after = await indexes(dataSource);
      expect({ customer: after.audit_events_customer_idx, reference: after.audit_events_reference_idx }).toEqual({
        customer: expect.objectContaining({
          valid: true,
          definition: expect.stringMatching(/USING btree \(customer_id, occurred_at, id\) WHERE \(customer_id IS NOT NULL\)$/),
        }),
        reference: expect.objectContaining({
          valid: true,
          definition: expect.stringMatching(/USING btree \(reference, occurred_at, id\) WHERE \(reference IS NOT NULL\)$/),
        }),
      });
    });
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
