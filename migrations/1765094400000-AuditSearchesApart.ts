import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reference and customer indexes keep the searches of the audit log apart (docs/decisions.md,
 * "The searches of the audit log, apart in its indexes"; figures in docs/benchmarks.md, "A
 * reference searched again and again").
 *
 * A search of the audit log is itself audited (`audit.query`), under the reference or customer it
 * looked at. The events of a reference are a handful; the searches about it grow with each search.
 * On an index of (reference, occurred_at, id), reading a reference's own events newest first read
 * every newer search about it and dropped it (50,000 searches: 26 ms warm where its 20 events take
 * 0.12 ms). Here the second key says whether an event is such a search, so a read that asks for
 * `(e.operation = 'audit.query') IS FALSE` (or `IS TRUE`) walks only those it wants, in time order
 * (src/audit/persistence/audit-query-key.sql.ts). A read that names the reference alone still finds
 * its events by the first key, but no longer in time order. One index each, as before: a write
 * costs what it did.
 *
 * - Outside a transaction, so that the running service keeps writing its audit events meanwhile:
 *   the new indexes are built CONCURRENTLY before the old ones go. After an interrupted run, a new
 *   index already built (valid) is kept, and one an interrupted build left invalid is built again;
 *   so the old index goes only once its replacement is whole.
 * - Replicas of the release before, during a rolling deploy (or after a rollback that keeps this
 *   migration), read the same rows as before on these indexes; only a much-searched reference or
 *   customer reads as slowly as it did before this migration.
 * - Reverting runs in a transaction, whatever `transaction` says, so `down` builds the old indexes
 *   with a plain CREATE INDEX, which holds the audit's writes (every request) for the build. On a
 *   large table, build them first by hand, CONCURRENTLY, with the statements in `down`
 *   (docs/operations.md, "Migrations"); `down` then only drops the new ones.
 */
const INDEXES: readonly (readonly [string, string, string])[] = [
  [
    'audit_events_by_reference_idx',
    `("reference", ("operation" = 'audit.query'), "occurred_at", "id") WHERE reference IS NOT NULL`,
    'audit_events_reference_idx',
  ],
  [
    'audit_events_by_customer_idx',
    `("customer_id", ("operation" = 'audit.query'), "occurred_at", "id") WHERE customer_id IS NOT NULL`,
    'audit_events_customer_idx',
  ],
];

export class AuditSearchesApart1765094400000 implements MigrationInterface {
  name = 'AuditSearchesApart1765094400000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, definition, replaced] of INDEXES) {
      const [built] = (await queryRunner.query(`SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`, [name])) as {
        valid: boolean;
      }[];
      if (!built?.valid) {
        await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
        await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "audit_events" ${definition}`);
      }
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${replaced}"`);
    }
  }

  // In a transaction (see above): a plain CREATE INDEX, IF NOT EXISTS so that indexes built by hand beforehand are kept.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "audit_events_reference_idx" ON "audit_events" ("reference", "occurred_at", "id") WHERE reference IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "audit_events_customer_idx" ON "audit_events" ("customer_id", "occurred_at", "id") WHERE customer_id IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_by_customer_idx"`);
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_by_reference_idx"`);
  }
}
