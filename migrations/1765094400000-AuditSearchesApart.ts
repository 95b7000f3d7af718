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
 * (src/audit/persistence/audit-query-key.sql.ts).
 *
 * - Added, not yet replacing: the old indexes stay for the release before, whose reads do not say
 *   the key, and which the new indexes would not give time order (a customer with 20,000 events of
 *   its own: 85 ms on them, 0.16 ms on the old index). The release after this one drops them
 *   (add, then use, then drop: docs/operations.md, "Migrations"); until then a write with a
 *   reference or a customer updates both.
 * - Outside a transaction, so that the running service keeps writing its audit events meanwhile:
 *   built CONCURRENTLY. After an interrupted run, an index already built (valid) is kept, and one
 *   an interrupted build left invalid is built again.
 */
const INDEXES: readonly (readonly [string, string])[] = [
  ['audit_events_by_reference_idx', `("reference", ("operation" = 'audit.query'), "occurred_at", "id") WHERE reference IS NOT NULL`],
  ['audit_events_by_customer_idx', `("customer_id", ("operation" = 'audit.query'), "occurred_at", "id") WHERE customer_id IS NOT NULL`],
];

export class AuditSearchesApart1765094400000 implements MigrationInterface {
  name = 'AuditSearchesApart1765094400000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, definition] of INDEXES) {
      const [built] = (await queryRunner.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE i.indrelid = 'audit_events'::regclass AND c.relname = $1`,
        [name],
      )) as { valid: boolean }[];
      if (built?.valid) continue;
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "audit_events" ${definition}`);
    }
  }

  // Reverting runs in a transaction, whatever `transaction` says: a plain DROP INDEX (the old indexes are still there).
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_by_customer_idx"`);
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_by_reference_idx"`);
  }
}
