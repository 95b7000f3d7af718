import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the reference and customer indexes that AuditSearchesApart1765094400000 replaced (add, then
 * use, then drop: docs/operations.md, "Migrations"). The release that added the new indexes kept
 * these for the release before it, whose reads did not say the new indexes' second key; every read
 * since says it (audit-query-key.sql.ts), and medium tests hold their plans to the new indexes.
 * Each audit event with a customer or a reference no longer updates two indexes for each of them.
 *
 * Outside a transaction, so that the running service keeps writing its audit events meanwhile:
 * dropped CONCURRENTLY, each only if it is there, so that a run that was interrupted runs again.
 */
const SUPERSEDED: readonly (readonly [string, string])[] = [
  ['audit_events_reference_idx', `("reference", "occurred_at", "id") WHERE reference IS NOT NULL`],
  ['audit_events_customer_idx', `("customer_id", "occurred_at", "id") WHERE customer_id IS NOT NULL`],
];

export class DropSupersededAuditIndexes1765180800000 implements MigrationInterface {
  name = 'DropSupersededAuditIndexes1765180800000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    // Never without what replaces them: both new indexes there and valid (a build interrupted leaves one invalid).
    const [{ valid }] = (await queryRunner.query(
      `SELECT count(*) FILTER (WHERE i.indisvalid) AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'audit_events'::regclass AND c.relname IN ('audit_events_by_reference_idx', 'audit_events_by_customer_idx')`,
    )) as { valid: string }[];
    if (Number(valid) !== 2) {
      throw new Error(
        'audit_events_by_reference_idx and audit_events_by_customer_idx must both be there and valid before the indexes they replace are dropped',
      );
    }
    for (const [name] of SUPERSEDED) await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
  }

  // Reverting runs in a transaction, whatever `transaction` says: a plain CREATE INDEX, which holds the table's writes while it builds.
  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [name, definition] of SUPERSEDED) await queryRunner.query(`CREATE INDEX IF NOT EXISTS "${name}" ON "audit_events" ${definition}`);
  }
}
