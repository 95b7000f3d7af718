import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * idempotency_keys: one row per (client, reference), claimed before a provider call and completed
 * with the result to replay. customer_tenants: which tenant may see which customer.
 * audit_events.replayed: a response served from idempotency_keys, with no provider call.
 */
export class CreateIdempotencyAndTenancy1763884800000 implements MigrationInterface {
  name = 'CreateIdempotencyAndTenancy1763884800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "client_id" uuid NOT NULL,
        "reference" uuid NOT NULL,
        "operation" varchar(40) NOT NULL,
        "fingerprint" char(64) NOT NULL,
        "state" varchar(16) NOT NULL,
        "locked_until" timestamptz,
        "result" jsonb,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL,
        CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("client_id", "reference"),
        CONSTRAINT "idempotency_keys_state_check" CHECK ("state" IN ('in_flight', 'completed', 'retryable'))
      )`);
    await queryRunner.query(`CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys" ("expires_at")`);
    await queryRunner.query(`
      CREATE TABLE "customer_tenants" (
        "customer_id" uuid PRIMARY KEY,
        "tenant" varchar(64) NOT NULL,
        "linked_by" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "customer_tenants_linked_by_check" CHECK ("linked_by" IN ('created', 'linked'))
      )`);
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "replayed" boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "replayed"`);
    await queryRunner.query(`DROP TABLE "customer_tenants"`);
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
