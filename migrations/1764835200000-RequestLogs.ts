import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request logs for partners (docs/decisions.md, "Request logs").
 *
 * - `audit_events.upstream_attempts`: each provider attempt of a call that was tried more than once
 *   (a retried read; a write retried because nothing was sent), in order: retry number, status,
 *   latency, the provider's error id, what failed. Null for a call made once (its one attempt is
 *   the `upstream_*` columns), and for a request that made no provider call.
 * - `audit_events_request_idx`: one request's events by its id (`GET /api/v1/requests/{request_id}`).
 * - `audit_events_tenant_idx`: a partner's requests, newest first (`GET /api/v1/requests`): without
 *   it, a small tenant's newest page walks every other tenant's newer events (docs/benchmarks.md).
 *
 * Sealed like every column (SEALED_COLUMNS_V5): an event without attempts hashes as before.
 */
export class RequestLogs1764835200000 implements MigrationInterface {
  name = 'RequestLogs1764835200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "upstream_attempts" jsonb`);
    await queryRunner.query(
      `ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_upstream_attempts_check" CHECK (jsonb_typeof("upstream_attempts") = 'array')`,
    );
    await queryRunner.query(`CREATE INDEX "audit_events_request_idx" ON "audit_events" ("request_id")`);
    await queryRunner.query(`CREATE INDEX "audit_events_tenant_idx" ON "audit_events" ("tenant", "occurred_at", "id") WHERE tenant IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "audit_events_tenant_idx"`);
    await queryRunner.query(`DROP INDEX "audit_events_request_idx"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_upstream_attempts_check"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "upstream_attempts"`);
  }
}
