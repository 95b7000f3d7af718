import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * End users (docs/security.md, "End users").
 *
 * - `customer_tenants.end_user`: the end user a customer belongs to within its tenant (their
 *   pseudonym: a keyed hash of issuer and subject, never the subject). Null: the tenant's partner
 *   servers only. Set once: at creation by an end user, or by a partner server's binding.
 * - `audit_events.caller_kind`: who called (partner, admin, end_user); the event's client_id is
 *   then the client's id or the end user's pseudonym. Null on events written before this column,
 *   and on requests refused before anyone was authenticated.
 * - `dpop_proofs`: DPoP proofs used, until their window ends (RFC 9449 section 11.1), shared by
 *   every replica.
 */
export class EndUsers1764316800000 implements MigrationInterface {
  name = 'EndUsers1764316800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "customer_tenants" ADD COLUMN "end_user" uuid`);
    await queryRunner.query(`CREATE INDEX "customer_tenants_end_user_idx" ON "customer_tenants" ("tenant", "end_user") WHERE end_user IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "caller_kind" varchar(16)`);
    await queryRunner.query(`
      ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_caller_kind_check"
      CHECK ("caller_kind" IN ('partner', 'admin', 'end_user'))`);
    await queryRunner.query(`
      CREATE TABLE "dpop_proofs" (
        "key" char(64) PRIMARY KEY,
        "expires_at" timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX "dpop_proofs_expires_at_idx" ON "dpop_proofs" ("expires_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "dpop_proofs"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_caller_kind_check"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "caller_kind"`);
    await queryRunner.query(`DROP INDEX "customer_tenants_end_user_idx"`);
    await queryRunner.query(`ALTER TABLE "customer_tenants" DROP COLUMN "end_user"`);
  }
}
