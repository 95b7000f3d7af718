import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events and webhooks (docs/events.md, docs/webhooks.md).
 *
 * - `partner_events`: what happened to a tenant's resources, each written in the same statement as
 *   the fact it reports (the outbox): never changed, read newest first, by a resource in sequence.
 * - `webhook_endpoints`: where a tenant wants its events, with its signing secrets sealed under
 *   DATA_KEY (the previous one kept through a rotation's overlap).
 * - `webhook_deliveries`: an event for an endpoint, and where its delivery stands;
 *   `webhook_attempts`: every attempt at it, as the delivery log shows it.
 * - `webhook_signing_keys`: the Ed25519 keys of the `v1a` signatures, sealed under DATA_KEY, their
 *   public halves published as a JWKS.
 *
 * An event for a tenant with an enabled endpoint asks the job engine (graphile-worker, whose schema
 * the start-up installs before these migrations run) to fan it out, in the same transaction as the
 * event: an event is never written without its delivery being due.
 */
export class PartnerEvents1765440000000 implements MigrationInterface {
  name = 'PartnerEvents1765440000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "partner_events" (
        "id" uuid NOT NULL,
        "tenant" character varying(64) NOT NULL,
        "type" character varying(64) NOT NULL,
        "resource_type" character varying(32) NOT NULL,
        "resource_id" character varying(100) NOT NULL,
        "sequence" integer NOT NULL,
        "request_id" character varying(128),
        "reference" uuid,
        "audit_event_id" uuid,
        "data" jsonb NOT NULL,
        "snapshot" jsonb,
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT "partner_events_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "partner_events_sequence_key" UNIQUE ("resource_type", "resource_id", "sequence")
      )`);
    await queryRunner.query(`CREATE INDEX "partner_events_listing_idx" ON "partner_events" ("tenant", "created_at" DESC, "id" DESC)`);
    await queryRunner.query(`CREATE INDEX "partner_events_request_idx" ON "partner_events" ("request_id") WHERE "request_id" IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE "webhook_endpoints" (
        "id" uuid NOT NULL,
        "tenant" character varying(64) NOT NULL,
        "url" character varying(2048) NOT NULL,
        "event_types" text[] NOT NULL,
        "enabled" boolean NOT NULL DEFAULT true,
        "description" character varying(200),
        "ordered" boolean NOT NULL DEFAULT false,
        "snapshot" boolean NOT NULL DEFAULT false,
        "secret" text NOT NULL,
        "previous_secret" text,
        "previous_secret_until" timestamptz,
        "secret_key" character varying(16) NOT NULL,
        "disabled_reason" character varying(32),
        "failing_since" timestamptz,
        "last_failure_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "webhook_endpoints_tenant_idx" ON "webhook_endpoints" ("tenant", "created_at" DESC, "id" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "webhook_deliveries" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "endpoint_id" uuid NOT NULL,
        "event_id" uuid NOT NULL,
        "status" character varying(16) NOT NULL,
        "attempts" integer NOT NULL DEFAULT 0,
        "generation" integer NOT NULL DEFAULT 0,
        "next_attempt_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        "updated_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "webhook_deliveries_once" UNIQUE ("endpoint_id", "event_id"),
        CONSTRAINT "webhook_deliveries_endpoint_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints" ("id") ON DELETE CASCADE,
        CONSTRAINT "webhook_deliveries_event_fkey" FOREIGN KEY ("event_id") REFERENCES "partner_events" ("id"),
        CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'waiting', 'succeeded', 'failed'))
      )`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" ("event_id")`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_failed_idx" ON "webhook_deliveries" ("endpoint_id", "created_at") WHERE "status" = 'failed'`);
    await queryRunner.query(`
      CREATE TABLE "webhook_attempts" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "delivery_id" uuid NOT NULL,
        "endpoint_id" uuid NOT NULL,
        "event_id" uuid NOT NULL,
        "attempt" integer NOT NULL,
        "attempted_at" timestamptz NOT NULL,
        "http_status" integer,
        "latency_ms" integer NOT NULL,
        "response" text,
        "failure" character varying(32),
        "next_attempt_at" timestamptz,
        CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "webhook_attempts_delivery_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries" ("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts" ("endpoint_id", "attempted_at" DESC, "id" DESC)`);
    await queryRunner.query(`CREATE INDEX "webhook_attempts_event_idx" ON "webhook_attempts" ("event_id", "attempted_at" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "webhook_signing_keys" (
        "kid" character varying(64) NOT NULL,
        "private_key" text NOT NULL,
        "secret_key" character varying(16) NOT NULL,
        "public_jwk" jsonb NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "webhook_signing_keys_pkey" PRIMARY KEY ("kid")
      )`);
    // The job engine's workers alive, by their last heartbeat: a worker silent past the limit is
    // taken for dead (killed, its machine lost), and its jobs unlocked for another (DeliveryRunner).
    await queryRunner.query(`
      CREATE TABLE "job_workers" (
        "worker_id" character varying(128) NOT NULL,
        "seen_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "job_workers_pkey" PRIMARY KEY ("worker_id")
      )`);
    // The outbox's other half: the fan-out is due in the same transaction as the event. The job
    // engine's tables are its owner's alone (row-level security, as graphile-worker sets them): jobs
    // are asked for through these two functions, which run with the owner's rights, their search_path fixed.
    await queryRunner.query(`
      CREATE FUNCTION "partner_event_due"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant = NEW.tenant AND e.enabled) THEN
          -- A tenant with an ordered endpoint has its fan-outs made one at a time, in order, so that its
          -- deliveries are made in sequence; the others' run side by side.
          PERFORM graphile_worker.add_job('webhooks.fan_out', json_build_object('event_id', NEW.id),
                                          queue_name => CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints o WHERE o.tenant = NEW.tenant AND o.enabled AND o.ordered)
                                                             THEN 'fan_out:' || NEW.tenant END,
                                          job_key => 'fan_out:' || NEW.id);
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION "partner_event_due"() FROM PUBLIC`);
    await queryRunner.query(`CREATE TRIGGER "partner_events_due" AFTER INSERT ON "partner_events" FOR EACH ROW EXECUTE FUNCTION "partner_event_due"()`);
    // A delivery's next attempt, due at `run_at` (now when null). Its key names the delivery, its
    // generation (a redelivery starts a new one) and the attempts made: asked for twice, it is one
    // job; an attempt still running under an older key is never replaced by the next one's job.
    await queryRunner.query(`
      CREATE FUNCTION "webhook_attempt_due"(delivery_id uuid, run_at timestamptz) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
      SET search_path = public, pg_temp AS $$
      DECLARE
        d webhook_deliveries;
      BEGIN
        SELECT * INTO d FROM webhook_deliveries WHERE id = delivery_id;
        IF NOT FOUND THEN RETURN; END IF;
        PERFORM graphile_worker.add_job('webhooks.deliver', json_build_object('delivery_id', d.id, 'generation', d.generation), run_at => run_at,
                                        job_key => 'deliver:' || d.id || ':' || d.generation || ':' || d.attempts);
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION "webhook_attempt_due"(uuid, timestamptz) FROM PUBLIC`);
    // A write whose outcome is unknown (the provider did not answer in time) is told to its tenant by
    // the same statement that records it in the audit log: the audit event is the fact.
    await queryRunner.query(`
      CREATE FUNCTION "request_outcome_unknown"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
      BEGIN
        -- Two unknown outcomes of one reference at once take their sequence numbers in turn.
        PERFORM pg_advisory_xact_lock(hashtext('partner_event:request:' || NEW.reference));
        INSERT INTO partner_events (id, tenant, type, resource_type, resource_id, sequence, request_id, reference, audit_event_id, data)
        VALUES (gen_random_uuid(), NEW.tenant, 'request.outcome_unknown', 'request', NEW.reference::text,
                (SELECT coalesce(max(e.sequence), 0) + 1 FROM partner_events e WHERE e.resource_type = 'request' AND e.resource_id = NEW.reference::text),
                NEW.request_id, NEW.reference::uuid, NEW.id,
                jsonb_build_object('operation', NEW.operation, 'reference', NEW.reference, 'request_id', NEW.request_id,
                                   'customer_id', NEW.customer_id, 'error_id', NEW.error_id));
        RETURN NULL;
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION "request_outcome_unknown"() FROM PUBLIC`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_events_outcome_unknown" AFTER INSERT ON "audit_events" FOR EACH ROW
      WHEN (NEW.phase = 'unknown' AND NEW.tenant IS NOT NULL AND NEW.reference IS NOT NULL
            AND NEW.operation IN ('customer.create', 'bank_account.create'))
      EXECUTE FUNCTION "request_outcome_unknown"()`);
    // An event is a fact: never changed, never removed by the service.
    await queryRunner.query(`
      CREATE FUNCTION "partner_events_unchanged"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'partner_events are append-only' USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER "partner_events_append_only" BEFORE UPDATE OR DELETE ON "partner_events" FOR EACH ROW EXECUTE FUNCTION "partner_events_unchanged"()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "audit_events_outcome_unknown" ON "audit_events"`);
    await queryRunner.query(`DROP FUNCTION "request_outcome_unknown"()`);
    await queryRunner.query(`DROP TABLE "job_workers"`);
    await queryRunner.query(`DROP TABLE "webhook_signing_keys"`);
    await queryRunner.query(`DROP TABLE "webhook_attempts"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP TABLE "webhook_endpoints"`);
    await queryRunner.query(`DROP TABLE "partner_events"`);
    await queryRunner.query(`DROP FUNCTION "partner_events_unchanged"()`);
    await queryRunner.query(`DROP FUNCTION "partner_event_due"()`);
    await queryRunner.query(`DROP FUNCTION "webhook_attempt_due"(uuid, timestamptz)`);
  }
}
