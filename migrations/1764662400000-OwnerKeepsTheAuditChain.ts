import { MigrationInterface, QueryRunner } from 'typeorm';

/** The owner's append_audit_checkpoint as this migration made it (AuditLogTree1765008000000 replaces it, and puts it back on revert). */
export const APPEND_AUDIT_CHECKPOINT = `
      CREATE FUNCTION append_audit_checkpoint(statement text, key_id varchar, signature bytea, manifest bytea)
      RETURNS bytea
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        s jsonb;
        h record;
        prev_seq bigint := 0;
        prev_head bytea := decode(repeat('00', 32), 'hex');
        prev_tx bigint := 0;
        prev_id uuid := '00000000-0000-0000-0000-000000000000';
        new_seq bigint;
        kind text;
        after_tx bigint;
        after_id uuid;
        end_tx bigint;
        end_id uuid;
        n bigint;
        first_at timestamptz;
        last_at timestamptz;
        new_head bytea := sha256(convert_to(statement, 'UTF8'));
      BEGIN
        BEGIN
          s := statement::jsonb;
          new_seq := (s->>'seq')::bigint;
          kind := s->>'kind';
          after_tx := (s->'after'->>'tx')::bigint;
          after_id := (s->'after'->>'id')::uuid;
          end_tx := (s->'end'->>'tx')::bigint;
          end_id := (s->'end'->>'id')::uuid;
        EXCEPTION WHEN others THEN
          RAISE EXCEPTION 'an audit checkpoint''s statement must be one the sealer writes' USING ERRCODE = 'check_violation';
        END;
        -- The chain ends at its newest checkpoint, which no purge removes.
        SELECT c.seq, c.head, c.end_tx, c.end_id INTO h FROM public.audit_checkpoints c ORDER BY c.seq DESC LIMIT 1;
        IF FOUND THEN
          prev_seq := h.seq; prev_head := h.head; prev_tx := h.end_tx; prev_id := h.end_id;
        END IF;
        IF new_seq IS DISTINCT FROM prev_seq + 1 THEN
          RAISE EXCEPTION 'audit checkpoint #% is out of sequence: the next is #%', new_seq, prev_seq + 1 USING ERRCODE = 'check_violation';
        END IF;
        IF (s->>'prev_head') IS DISTINCT FROM encode(prev_head, 'hex') THEN
          RAISE EXCEPTION 'audit checkpoint #% does not follow the chain''s head', new_seq USING ERRCODE = 'check_violation';
        END IF;
        IF (after_tx, after_id) IS DISTINCT FROM (prev_tx, prev_id) THEN
          RAISE EXCEPTION 'audit checkpoint #% does not start where the chain ends', new_seq USING ERRCODE = 'check_violation';
        END IF;
        IF kind = 'seal' THEN
          IF end_tx >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint THEN
            RAISE EXCEPTION 'audit checkpoint #% reaches events that have not settled', new_seq USING ERRCODE = 'check_violation';
          END IF;
          SELECT count(*), min(e.occurred_at), max(e.occurred_at) INTO n, first_at, last_at
            FROM public.audit_events e WHERE (e.tx, e.id) > (after_tx, after_id) AND (e.tx, e.id) <= (end_tx, end_id);
          IF n = 0 OR n IS DISTINCT FROM (s->>'events')::bigint
             OR NOT EXISTS (SELECT 1 FROM public.audit_events e WHERE e.tx = end_tx AND e.id = end_id)
             OR first_at IS DISTINCT FROM (s->>'first_occurred_at')::timestamptz
             OR last_at IS DISTINCT FROM (s->>'last_occurred_at')::timestamptz THEN
            RAISE EXCEPTION 'audit checkpoint #% does not describe the events it covers', new_seq USING ERRCODE = 'check_violation';
          END IF;
          IF manifest IS NULL OR length(manifest) <> 48 * n OR encode(sha256(manifest), 'hex') IS DISTINCT FROM s->>'manifest_sha256' THEN
            RAISE EXCEPTION 'audit checkpoint #% has no manifest matching its statement', new_seq USING ERRCODE = 'check_violation';
          END IF;
        ELSIF kind = 'purge' THEN
          IF (end_tx, end_id) IS DISTINCT FROM (prev_tx, prev_id) OR (s->>'events')::bigint <> 0 OR manifest IS NOT NULL THEN
            RAISE EXCEPTION 'audit checkpoint #% is a purge: it covers no events', new_seq USING ERRCODE = 'check_violation';
          END IF;
          -- It records a purge made in its own transaction, as that purge made it.
          DELETE FROM public.audit_purges_unrecorded u
            WHERE u.through_seq = (s->'purge'->>'through_seq')::bigint
              AND encode(u.through_head, 'hex') = s->'purge'->>'through_head'
              AND u.events = (s->'purge'->>'events')::bigint;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'audit checkpoint #% records no purge made in its transaction', new_seq USING ERRCODE = 'check_violation';
          END IF;
          n := 0;
        ELSE
          RAISE EXCEPTION 'audit checkpoint #% is of no known kind', new_seq USING ERRCODE = 'check_violation';
        END IF;
        INSERT INTO public.audit_checkpoints (seq, kind, sealed_at, end_tx, end_id, events, first_occurred_at, last_occurred_at, statement, head, key_id, signature)
          VALUES (new_seq, kind, (s->>'sealed_at')::timestamptz, end_tx, end_id, n, first_at, last_at, statement, new_head, key_id, signature);
        IF manifest IS NOT NULL THEN
          INSERT INTO public.audit_manifests (seq, entries) VALUES (new_seq, manifest);
        END IF;
        RETURN new_head;
      END $$`;

/**
 * The service's role may add to the audit log and nothing else (docs/security.md, "Separation of
 * duties in the database"). Until now it could also insert any checkpoint row, and the purge
 * trusted the checkpoints' own columns: a checkpoint placed first in the chain, covering every
 * event and dated in the past, made the purge delete the whole log. Now:
 *
 * - `append_audit_checkpoint(statement, key_id, signature, manifest)`, the owner's: the only way a
 *   checkpoint is added. Its columns come from the signed statement itself; it must follow the
 *   newest checkpoint (the next number, that one's head as its previous, starting where it ends),
 *   and (a seal) cover events that exist, have all settled, and match the statement's count and
 *   times. The head is computed here, not taken from the caller.
 * - `audit_policy`: the configured retention (AUDIT_RETENTION_DAYS), set by the owner at start-up,
 *   never under 365 days.
 * - `purge_sealed_audit_events` refuses a cutoff younger than that retention, decides on the
 *   events' own `occurred_at`, read from the events, never on a checkpoint's columns, and never
 *   removes the newest checkpoint (where the chain ends, so the next one always has one to follow).
 * - `audit_purges_unrecorded`: a purge and its signed purge checkpoint commit together or not at
 *   all (a deferred constraint trigger), so the purge cannot be called on its own.
 *
 * The owner's functions search `pg_catalog` only (and name their tables `public.…`), so that
 * nothing a caller may create in `public` (PostgreSQL before 15 lets everyone) or in its own
 * temporary schema stands in for a built-in or a table. The service's INSERT on audit_events
 * leaves out `occurred_at` (now `clock_timestamp()`: when the row is written) and `tx`: the
 * database sets them (src/database/database-roles.ts grants the columns). Direct writes to
 * checkpoints and manifests granted before are revoked here, under a lock, so that no older
 * replica's sealer adds one beside this migration.
 */
export class OwnerKeepsTheAuditChain1764662400000 implements MigrationInterface {
  name = 'OwnerKeepsTheAuditChain1764662400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Until this migration commits, no checkpoint is added beside it (an older replica's sealer,
    // during a rolling upgrade), and from then on none is added but through the owner's function.
    await queryRunner.query(`LOCK TABLE audit_checkpoints, audit_manifests IN EXCLUSIVE MODE`);
    await queryRunner.query(`
      DO $$
      DECLARE g record;
      BEGIN
        FOR g IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
                  WHERE table_schema = current_schema() AND table_name IN ('audit_checkpoints', 'audit_manifests')
                    AND privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE') AND grantee NOT IN (current_user, 'PUBLIC')
        LOOP
          EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_checkpoints, audit_manifests FROM %I', g.grantee);
        END LOOP;
      END $$`);
    // Functions the owner's code calls run with the caller's search_path unless they fix their own.
    await queryRunner.query(`ALTER FUNCTION audit_current_tx() SET search_path = pg_catalog`);
    await queryRunner.query(`ALTER FUNCTION audit_events_append_only() SET search_path = pg_catalog`);
    // When the event is written, not when its transaction began: a transaction held open cannot date what it writes.
    await queryRunner.query(`ALTER TABLE "audit_events" ALTER COLUMN "occurred_at" SET DEFAULT clock_timestamp()`);

    await queryRunner.query(`
      CREATE TABLE "audit_policy" (
        "only" boolean PRIMARY KEY DEFAULT true CONSTRAINT "audit_policy_one_row" CHECK ("only"),
        "retention_days" integer NOT NULL CONSTRAINT "audit_policy_retention_days_check" CHECK ("retention_days" BETWEEN 365 AND 3650)
      )`);
    await queryRunner.query(`INSERT INTO "audit_policy" (retention_days) VALUES (400)`);

    // A purge and its signed record commit together or not at all: the purge notes what it removed
    // here, the purge checkpoint's append takes the note away, and a note left at commit fails it.
    await queryRunner.query(`
      CREATE TABLE "audit_purges_unrecorded" (
        "through_seq" bigint PRIMARY KEY,
        "through_head" bytea NOT NULL,
        "events" bigint NOT NULL
      )`);
    await queryRunner.query(`
      CREATE FUNCTION audit_purge_recorded() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM public.audit_purges_unrecorded u WHERE u.through_seq = NEW.through_seq) THEN
          RAISE EXCEPTION 'the purge through audit checkpoint #% has no purge checkpoint: a purge commits only with its signed record', NEW.through_seq
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE CONSTRAINT TRIGGER "audit_purge_must_be_recorded" AFTER INSERT ON "audit_purges_unrecorded"
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_purge_recorded()`);

    await queryRunner.query(APPEND_AUDIT_CHECKPOINT);
    await queryRunner.query(`REVOKE ALL ON FUNCTION append_audit_checkpoint(text, varchar, bytea, bytea) FROM PUBLIC`);

    await queryRunner.query(`DROP FUNCTION purge_sealed_audit_events(timestamptz, integer)`);
    await queryRunner.query(`
      CREATE FUNCTION purge_sealed_audit_events(cutoff timestamptz, max_events integer)
      RETURNS TABLE (through_seq bigint, through_head bytea, purged bigint)
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        r record;
        last record;
        kept_days integer := greatest(365, coalesce((SELECT p.retention_days FROM public.audit_policy p), 365));
        from_tx bigint := 0;
        from_id uuid := '00000000-0000-0000-0000-000000000000';
        newest timestamptz;
        head_seq bigint := (SELECT max(c.seq) FROM public.audit_checkpoints c);
        total bigint := 0;
        sealed boolean := false;
      BEGIN
        IF cutoff IS NULL OR cutoff > now() - make_interval(days => kept_days) THEN
          RAISE EXCEPTION 'audit events are kept at least % days (AUDIT_RETENTION_DAYS, never under 365); cutoff % is too recent', kept_days, cutoff
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        -- The oldest checkpoints, in order, whose every event occurred before the cutoff: read from
        -- the events themselves, whatever the checkpoint rows say. Never the newest: the chain ends
        -- there, and the next checkpoint follows it.
        FOR r IN SELECT c.seq, c.head, c.end_tx, c.end_id, c.events FROM public.audit_checkpoints c ORDER BY c.seq LOOP
          EXIT WHEN r.seq = head_seq;
          SELECT max(e.occurred_at) INTO newest FROM public.audit_events e
            WHERE (e.tx, e.id) > (from_tx, from_id) AND (e.tx, e.id) <= (r.end_tx, r.end_id);
          EXIT WHEN newest IS NOT NULL AND newest >= cutoff;
          EXIT WHEN total > 0 AND total + r.events > max_events;
          total := total + r.events;
          sealed := sealed OR newest IS NOT NULL;
          last := r;
          IF (r.end_tx, r.end_id) > (from_tx, from_id) THEN
            from_tx := r.end_tx;
            from_id := r.end_id;
          END IF;
        END LOOP;
        IF NOT sealed THEN
          RETURN;
        END IF;
        PERFORM set_config('partner_gateway.audit_purge', 'on', true);
        DELETE FROM public.audit_events e WHERE (e.tx, e.id) <= (from_tx, from_id) AND e.occurred_at < cutoff;
        GET DIAGNOSTICS purged = ROW_COUNT;
        DELETE FROM public.audit_manifests m WHERE m.seq <= last.seq;
        DELETE FROM public.audit_checkpoints c WHERE c.seq <= last.seq;
        PERFORM set_config('partner_gateway.audit_purge', 'off', true);
        INSERT INTO public.audit_purges_unrecorded (through_seq, through_head, events) VALUES (last.seq, last.head, purged);
        through_seq := last.seq;
        through_head := last.head;
        RETURN NEXT;
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION purge_sealed_audit_events(timestamptz, integer) FROM PUBLIC`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION purge_sealed_audit_events(timestamptz, integer)`);
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
    await queryRunner.query(`DROP FUNCTION append_audit_checkpoint(text, varchar, bytea, bytea)`);
    await queryRunner.query(`DROP TABLE "audit_purges_unrecorded"`);
    await queryRunner.query(`DROP FUNCTION audit_purge_recorded()`);
    await queryRunner.query(`ALTER TABLE "audit_events" ALTER COLUMN "occurred_at" SET DEFAULT now()`);
    await queryRunner.query(`ALTER FUNCTION audit_events_append_only() RESET search_path`);
    await queryRunner.query(`ALTER FUNCTION audit_current_tx() RESET search_path`);
    await queryRunner.query(`DROP TABLE "audit_policy"`);
  }
}
