import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reference is unique across the whole gateway, as in the provider's namespace: idempotency_keys
 * is keyed by reference alone, and client_id says which client owns it. Where two clients had used
 * the same reference, the newer row is kept (the older one is the provider's, which refused the
 * second anyway, and its result could not be replayed to the other client).
 */
export class ReferencesUniquePerGateway1763971200000 implements MigrationInterface {
  name = 'ReferencesUniquePerGateway1763971200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM "idempotency_keys" k USING "idempotency_keys" newer
       WHERE k."reference" = newer."reference"
         AND (k."created_at", k."client_id") < (newer."created_at", newer."client_id")`);
    await queryRunner.query(`ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_pkey"`);
    await queryRunner.query(`ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("reference")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_pkey"`);
    await queryRunner.query(`ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("client_id", "reference")`);
  }
}
