import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Staff access (docs/security.md, "Staff").
 *
 * - `audit_events.caller_kind` gains `staff`: a member of the company's staff, signed in at its
 *   OpenID provider. Their events name them: `staff_id` (their stable id there) and `client_name`
 *   (their display name); `client_id` and `tenant` stay null.
 * - `staff_roles`: the roles (support, compliance, operator) the request was allowed with.
 * - `access_reason`: why they looked (a ticket id or words), as a search about a customer, an end
 *   user or a reference must say.
 * - `break_glass`: true on every event an admin client token made (automation and emergencies).
 *
 * Sealed like every column (SEALED_COLUMNS_V4): an event where all four are null hashes as before.
 */
export class StaffAccess1764748800000 implements MigrationInterface {
  name = 'StaffAccess1764748800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_caller_kind_check"`);
    await queryRunner.query(`
      ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_caller_kind_check"
      CHECK ("caller_kind" IN ('partner', 'admin', 'end_user', 'staff'))`);
    await queryRunner.query(`
      ALTER TABLE "audit_events"
        ADD COLUMN "staff_id" varchar(255),
        ADD COLUMN "staff_roles" varchar(100),
        ADD COLUMN "access_reason" varchar(200),
        ADD COLUMN "break_glass" boolean`);
    await queryRunner.query(`
      ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_staff_check"
      CHECK (("staff_id" IS NULL) = ("caller_kind" IS DISTINCT FROM 'staff') AND "break_glass" IS NOT FALSE)`);
    await queryRunner.query(`CREATE INDEX "audit_events_staff_idx" ON "audit_events" ("staff_id", "occurred_at", "id") WHERE staff_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "audit_events_staff_idx"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_staff_check"`);
    await queryRunner.query(`
      ALTER TABLE "audit_events"
        DROP COLUMN "break_glass",
        DROP COLUMN "access_reason",
        DROP COLUMN "staff_roles",
        DROP COLUMN "staff_id"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_caller_kind_check"`);
    await queryRunner.query(`
      ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_caller_kind_check"
      CHECK ("caller_kind" IN ('partner', 'admin', 'end_user'))`);
  }
}
