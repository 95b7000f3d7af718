import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request logs for partners (docs/decisions.md, "Request logs for partners").
 *
 * - `audit_events.upstream_attempts`: each provider attempt of a call that was tried more than once
 *   (a retried read; a write retried because nothing was sent), or that got no answer, in order:
 *   retry number, status, latency, the provider's error id, what failed. Null for a call answered at
 *   once (its one attempt is the `upstream_*` columns), and for a request that made no provider call.
 * - `audit_events_request_idx`: one request's events by its id and tenant
 *   (`GET /api/v1/requests/{request_id}`, and whether a request has ended).
 * - `audit_events_tenant_idx`: a partner's requests, newest first (`GET /api/v1/requests`): without
 *   it, a small tenant's newest page walks every other tenant's newer events (docs/benchmarks.md).
 *
 * Sealed like every column (SEALED_COLUMNS_V5): an event without attempts hashes as before.
 *
 * Outside a transaction, so that the running service keeps writing its audit events meanwhile:
 * the check is added NOT VALID and validated apart (a scan that takes no lock writers wait on),
 * the indexes are built CONCURRENTLY. Each step may run again after an interrupted one.
 */
export class RequestLogs1764835200000 implements MigrationInterface {
  name = 'RequestLogs1764835200000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN IF NOT EXISTS "upstream_attempts" jsonb`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT IF EXISTS "audit_events_upstream_attempts_check"`);
    await queryRunner.query(
      `ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_upstream_attempts_check" CHECK (jsonb_typeof("upstream_attempts") = 'array') NOT VALID`,
    );
    await queryRunner.query(`ALTER TABLE "audit_events" VALIDATE CONSTRAINT "audit_events_upstream_attempts_check"`);
    // An index an interrupted build left invalid is built again.
    for (const [name, definition] of [
      ['audit_events_request_idx', `("request_id", "tenant")`],
      ['audit_events_tenant_idx', `("tenant", "occurred_at", "id") WHERE tenant IS NOT NULL`],
    ]) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "audit_events" ${definition}`);
    }
  }

  // Reverting runs in a transaction, whatever `transaction` says: the indexes go with a plain DROP INDEX.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_tenant_idx"`);
    await queryRunner.query(`DROP INDEX IF EXISTS "audit_events_request_idx"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT IF EXISTS "audit_events_upstream_attempts_check"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN IF EXISTS "upstream_attempts"`);
  }
}
