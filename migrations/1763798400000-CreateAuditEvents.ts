import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log: append-only. A trigger refuses UPDATE, DELETE and TRUNCATE; the one way out is
 * purge_audit_events(), which deletes only events older than a year (PCI DSS 10.5.1 keeps twelve
 * months) and is what the retention job calls.
 */
export class CreateAuditEvents1763798400000 implements MigrationInterface {
  name = 'CreateAuditEvents1763798400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "audit_events" (
        "id" uuid PRIMARY KEY,
        "occurred_at" timestamptz NOT NULL DEFAULT now(),
        "request_id" varchar(128) NOT NULL,
        "client_id" uuid,
        "client_name" varchar(100),
        "tenant" varchar(64),
        "operation" varchar(40) NOT NULL,
        "phase" varchar(16) NOT NULL,
        "http_method" varchar(10),
        "route" varchar(200),
        "reference" uuid,
        "customer_id" uuid,
        "currency" varchar(3),
        "http_status" smallint,
        "upstream_status" smallint,
        "error_id" uuid,
        "error_code" varchar(64),
        "upstream_error_id" varchar(100),
        "error_message" varchar(500),
        "latency_ms" integer,
        "upstream_latency_ms" integer,
        "source_ip" varchar(45),
        CONSTRAINT "audit_events_phase_check" CHECK ("phase" IN ('attempted', 'succeeded', 'rejected', 'failed', 'unknown'))
      )`);
    // Every filter of GET /api/v1/audit-events, each ending in the (occurred_at, id) page order.
    await queryRunner.query(`CREATE INDEX "audit_events_occurred_at_idx" ON "audit_events" ("occurred_at", "id")`);
    await queryRunner.query(`CREATE INDEX "audit_events_reference_idx" ON "audit_events" ("reference", "occurred_at", "id") WHERE reference IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "audit_events_customer_idx" ON "audit_events" ("customer_id", "occurred_at", "id") WHERE customer_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "audit_events_error_id_idx" ON "audit_events" ("error_id") WHERE error_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "audit_events_upstream_error_id_idx" ON "audit_events" ("upstream_error_id") WHERE upstream_error_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "audit_events_client_idx" ON "audit_events" ("client_id", "occurred_at", "id") WHERE client_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "audit_events_operation_idx" ON "audit_events" ("operation", "occurred_at", "id")`);
    await queryRunner.query(`CREATE INDEX "audit_events_phase_idx" ON "audit_events" ("phase", "occurred_at", "id")`);

    await queryRunner.query(`
      CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('partner_gateway.audit_purge', true) = 'on' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_events_append_only" BEFORE UPDATE OR DELETE ON "audit_events"
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_events_no_truncate" BEFORE TRUNCATE ON "audit_events"
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`);
    await queryRunner.query(`
      CREATE FUNCTION purge_audit_events(cutoff timestamptz, batch integer) RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        purged bigint;
      BEGIN
        IF cutoff > now() - interval '365 days' THEN
          RAISE EXCEPTION 'audit events are kept at least 365 days; cutoff % is too recent', cutoff
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        PERFORM set_config('partner_gateway.audit_purge', 'on', true);
        DELETE FROM audit_events WHERE id IN (
          SELECT id FROM audit_events WHERE occurred_at < cutoff ORDER BY occurred_at LIMIT batch
        );
        GET DIAGNOSTICS purged = ROW_COUNT;
        PERFORM set_config('partner_gateway.audit_purge', 'off', true);
        RETURN purged;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "audit_events"`);
    await queryRunner.query(`DROP FUNCTION purge_audit_events(timestamptz, integer)`);
    await queryRunner.query(`DROP FUNCTION audit_events_append_only()`);
  }
}
