import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a partner reads back of what it created (docs/partner-resources.md): a customer's reference
 * and country beside its tenancy, and every bank account the provider opened, its identifiers sealed
 * under DATA_KEY. Accounts opened before this change are reconstructed at the service's first start
 * after it (it holds the key; the migration does not), and the report of what could not be is kept
 * in data_upgrades.
 */
export class PartnerResources1765353600000 implements MigrationInterface {
  name = 'PartnerResources1765353600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "customer_tenants" ADD "reference" uuid, ADD "country" character(2)`);
    // A tenant's customers, newest first: the list's keyset (created_at, customer_id).
    await queryRunner.query(`CREATE INDEX "customer_tenants_listing_idx" ON "customer_tenants" ("tenant", "created_at" DESC, "customer_id" DESC)`);
    // The reference each customer was created with, where the audit log's terminal event of its creation still says it.
    await queryRunner.query(`
      UPDATE "customer_tenants" c SET "reference" = e."reference"
      FROM (
        SELECT DISTINCT ON ("customer_id") "customer_id", "reference" FROM "audit_events"
        WHERE "operation" = 'customer.create' AND "http_status" = 201 AND "customer_id" IS NOT NULL AND "reference" IS NOT NULL
        ORDER BY "customer_id", "occurred_at"
      ) e
      WHERE e."customer_id" = c."customer_id" AND c."reference" IS NULL`);
    await queryRunner.query(`
      CREATE TABLE "bank_accounts" (
        "id" character varying(100) NOT NULL,
        "tenant" character varying(64) NOT NULL,
        "customer_id" uuid NOT NULL,
        "currency" character(3) NOT NULL,
        "status" character varying(32) NOT NULL,
        "reference" uuid NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "identifiers" text NOT NULL,
        "identifiers_key" character varying(16) NOT NULL,
        "last4" character varying(4) NOT NULL,
        "origin" character varying(16) NOT NULL,
        CONSTRAINT "bank_accounts_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "bank_accounts_reference_key" UNIQUE ("reference"),
        CONSTRAINT "bank_accounts_currency_check" CHECK ("currency" IN ('EUR', 'GBP')),
        CONSTRAINT "bank_accounts_origin_check" CHECK ("origin" IN ('opened', 'reconstructed'))
      )`);
    await queryRunner.query(`CREATE INDEX "bank_accounts_listing_idx" ON "bank_accounts" ("tenant", "created_at" DESC, "id" DESC)`);
    await queryRunner.query(`CREATE INDEX "bank_accounts_customer_idx" ON "bank_accounts" ("customer_id", "created_at" DESC, "id" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "data_upgrades" (
        "name" character varying(64) NOT NULL,
        "completed_at" timestamptz NOT NULL DEFAULT now(),
        "report" jsonb NOT NULL,
        CONSTRAINT "data_upgrades_pkey" PRIMARY KEY ("name")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "data_upgrades"`);
    await queryRunner.query(`DROP TABLE "bank_accounts"`);
    await queryRunner.query(`DROP INDEX "customer_tenants_listing_idx"`);
    await queryRunner.query(`ALTER TABLE "customer_tenants" DROP COLUMN "country", DROP COLUMN "reference"`);
  }
}
