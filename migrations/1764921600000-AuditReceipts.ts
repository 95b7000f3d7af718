import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Receipts a partner can verify (docs/security.md, "Receipts"): an event's proof is read from the
 * seal checkpoint whose range holds it, found by where each seal's range ends. Built CONCURRENTLY,
 * outside a transaction, so that the sealer keeps appending checkpoints meanwhile.
 */
export class AuditReceipts1764921600000 implements MigrationInterface {
  name = 'AuditReceipts1764921600000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    // An index an interrupted build left invalid is built again.
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "audit_checkpoints_end_idx"`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY "audit_checkpoints_end_idx" ON "audit_checkpoints" ("end_tx", "end_id") WHERE kind = 'seal'`);
  }

  // Reverting runs in a transaction, whatever `transaction` says: the indexes go with a plain DROP INDEX.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_checkpoints_end_idx"`);
  }
}
