import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `audit_events.trace_id`: the W3C trace id of the request that wrote the event, when its trace was
 * sampled (docs/operations.md, "From error.id to the trace"): lowercase hex, 32 digits, never all
 * zeros. Null when tracing is off, the trace was not sampled, or the event came from a command-line
 * tool. Sealed like every column (SEALED_COLUMNS_V3): an event where it is null hashes as before.
 */
export class AuditTraceIds1764489600000 implements MigrationInterface {
  name = 'AuditTraceIds1764489600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "trace_id" varchar(32)`);
    await queryRunner.query(`
      ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_trace_id_check"
      CHECK ("trace_id" ~ '^[0-9a-f]{32}$' AND "trace_id" <> '00000000000000000000000000000000')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_trace_id_check"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "trace_id"`);
  }
}
