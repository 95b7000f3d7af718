import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change to api_clients — a revocation, an expiry moved, a client created or deleted, by the
 * command line, psql or anything else — sends NOTIFY api_clients_changed when it commits. Each
 * gateway process listens, and forgets the clients it remembers (see ApiClientsService).
 */
export class NotifyApiClientChanges1764057600000 implements MigrationInterface {
  name = 'NotifyApiClientChanges1764057600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION notify_api_clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_clients_changed', '');
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER api_clients_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_clients"
        FOR EACH STATEMENT EXECUTE FUNCTION notify_api_clients_changed()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER api_clients_changed ON "api_clients"`);
    await queryRunner.query(`DROP FUNCTION notify_api_clients_changed()`);
  }
}
