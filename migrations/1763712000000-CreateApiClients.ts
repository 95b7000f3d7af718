import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateApiClients1763712000000 implements MigrationInterface {
  name = 'CreateApiClients1763712000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "api_clients" (
        "id" uuid PRIMARY KEY,
        "name" varchar(100) NOT NULL,
        "role" varchar(16) NOT NULL CHECK ("role" IN ('partner', 'admin')),
        "tenant" varchar(64) NOT NULL,
        "token_hash" char(64) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz,
        "revoked_at" timestamptz
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "api_clients_token_hash_key" ON "api_clients" ("token_hash")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "api_clients_active_name_key" ON "api_clients" ("name") WHERE revoked_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "api_clients"`);
  }
}
