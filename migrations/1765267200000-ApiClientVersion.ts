import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each API client is pinned to an API version (docs/api-contract.md, "Versions"): the clients made
 * before versions were named get the first one, which is what they were answered under.
 */
export class ApiClientVersion1765267200000 implements MigrationInterface {
  name = 'ApiClientVersion1765267200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_clients" ADD "api_version" character varying(10) NOT NULL DEFAULT '2026-12-01'`);
    await queryRunner.query(`ALTER TABLE "api_clients" ADD CONSTRAINT "api_clients_api_version_check" CHECK ("api_version" ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_clients" DROP CONSTRAINT "api_clients_api_version_check"`);
    await queryRunner.query(`ALTER TABLE "api_clients" DROP COLUMN "api_version"`);
  }
}
