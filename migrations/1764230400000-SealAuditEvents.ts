import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tamper evidence for the audit log (docs/security.md, "Sealed audit log").
 *
 * - `audit_events.tx`: the transaction that wrote the event (its 64-bit id, which never wraps around). Events are sealed in (tx, id) order,
 *   and only once every transaction with a smaller id has ended, so one that commits late can
 *   never land behind a seal.
 * - `audit_checkpoints`: the signed statements, a hash chain (each names the previous one's head).
 * - `audit_manifests`: per checkpoint, each covered event's id and hash in order, so that verify
 *   can name what changed. Its digest is in the signed statement.
 * - Both are append-only like the events; the purge, now `purge_sealed_audit_events`, removes whole
 *   checkpoints' ranges (events, manifests and checkpoints) and no more.
 *
 * Existing events all get this migration's transaction id, and are sealed at the next start.
 */
export class SealAuditEvents1764230400000 implements MigrationInterface {
  name = 'SealAuditEvents1764230400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The writing transaction's 64-bit id (xid8, which never wraps around), as a bigint.
    await queryRunner.query(`CREATE FUNCTION audit_current_tx() RETURNS bigint LANGUAGE sql VOLATILE AS $$ SELECT pg_current_xact_id()::text::bigint $$`);
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "tx" bigint NOT NULL DEFAULT audit_current_tx()`);
    await queryRunner.query(`CREATE INDEX "audit_events_tx_idx" ON "audit_events" ("tx", "id")`);

    await queryRunner.query(`
      CREATE TABLE "audit_checkpoints" (
        "seq" bigint PRIMARY KEY,
        "kind" varchar(8) NOT NULL,
        "sealed_at" timestamptz NOT NULL,
        "end_tx" bigint NOT NULL,
        "end_id" uuid NOT NULL,
        "events" integer NOT NULL,
        "first_occurred_at" timestamptz,
        "last_occurred_at" timestamptz,
        "statement" text NOT NULL,
        "head" bytea NOT NULL,
        "key_id" varchar(64) NOT NULL,
        "signature" bytea NOT NULL,
        CONSTRAINT "audit_checkpoints_kind_check" CHECK ("kind" IN ('seal', 'purge'))
      )`);
    await queryRunner.query(`
      CREATE TABLE "audit_manifests" (
        "seq" bigint PRIMARY KEY,
        "entries" bytea NOT NULL
      )`);
    // Entries are random hashes: compressing them only costs time.
    await queryRunner.query(`ALTER TABLE "audit_manifests" ALTER COLUMN "entries" SET STORAGE EXTERNAL`);

    for (const table of ['audit_checkpoints', 'audit_manifests']) {
      await queryRunner.query(`
        CREATE TRIGGER "${table}_append_only" BEFORE UPDATE OR DELETE ON "${table}"
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`);
      await queryRunner.query(`
        CREATE TRIGGER "${table}_no_truncate" BEFORE TRUNCATE ON "${table}"
        FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`);
    }

    // The same rule for three tables now: each names itself when it refuses.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('partner_gateway.audit_purge', true) = 'on' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);

    await queryRunner.query(`DROP FUNCTION purge_audit_events(timestamptz, integer)`);
    await queryRunner.query(`
      CREATE FUNCTION purge_sealed_audit_events(cutoff timestamptz, max_events integer)
      RETURNS TABLE (through_seq bigint, through_head bytea, purged bigint)
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
      DECLARE
        r record;
        last record;
        total bigint := 0;
        sealed boolean := false;
      BEGIN
        IF cutoff > now() - interval '365 days' THEN
          RAISE EXCEPTION 'audit events are kept at least 365 days; cutoff % is too recent', cutoff
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        -- The oldest checkpoints, in order, whose every event is older than the cutoff.
        FOR r IN SELECT c.seq, c.head, c.end_tx, c.end_id, c.events, c.last_occurred_at FROM audit_checkpoints c ORDER BY c.seq LOOP
          EXIT WHEN r.last_occurred_at IS NOT NULL AND r.last_occurred_at >= cutoff;
          EXIT WHEN total > 0 AND total + r.events > max_events;
          total := total + r.events;
          sealed := sealed OR r.events > 0;
          last := r;
        END LOOP;
        IF NOT sealed THEN
          RETURN;
        END IF;
        PERFORM set_config('partner_gateway.audit_purge', 'on', true);
        DELETE FROM audit_events e WHERE (e.tx, e.id) <= (last.end_tx, last.end_id);
        GET DIAGNOSTICS purged = ROW_COUNT;
        DELETE FROM audit_manifests m WHERE m.seq <= last.seq;
        DELETE FROM audit_checkpoints c WHERE c.seq <= last.seq;
        PERFORM set_config('partner_gateway.audit_purge', 'off', true);
        through_seq := last.seq;
        through_head := last.head;
        RETURN NEXT;
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION purge_sealed_audit_events(timestamptz, integer) FROM PUBLIC`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION purge_sealed_audit_events(timestamptz, integer)`);
    await queryRunner.query(`
      CREATE FUNCTION purge_audit_events(cutoff timestamptz, batch integer) RETURNS bigint
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
    await queryRunner.query(`REVOKE ALL ON FUNCTION purge_audit_events(timestamptz, integer) FROM PUBLIC`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('partner_gateway.audit_purge', true) = 'on' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`DROP TABLE "audit_manifests"`);
    await queryRunner.query(`DROP TABLE "audit_checkpoints"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "tx"`);
    await queryRunner.query(`DROP FUNCTION audit_current_tx()`);
  }
}
