import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention purge runs with its owner's rights (SECURITY DEFINER), so that the service's role,
 * which may not DELETE from the audit log, can still call it; it keeps refusing a cutoff under 365
 * days. Its search_path is fixed, so that the caller's cannot redirect the tables it names. Who
 * may call it is granted at start-up (src/database/database-roles.ts).
 */
export class PurgeAsOwner1764144000000 implements MigrationInterface {
  name = 'PurgeAsOwner1764144000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER FUNCTION purge_audit_events(timestamptz, integer) SECURITY DEFINER SET search_path = public, pg_temp`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION purge_audit_events(timestamptz, integer) FROM PUBLIC`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`GRANT EXECUTE ON FUNCTION purge_audit_events(timestamptz, integer) TO PUBLIC`);
    await queryRunner.query(`ALTER FUNCTION purge_audit_events(timestamptz, integer) SECURITY INVOKER RESET search_path`);
  }
}
