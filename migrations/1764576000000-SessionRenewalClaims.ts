import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `browser_sessions.renewal_claimed_until`: while set and in the future, one request (of one
 * replica) is renewing the session's tokens at the OpenID provider. The claim replaces a row lock
 * held across the provider's call, which kept a pooled connection busy for as long as the provider
 * took to answer.
 */
export class SessionRenewalClaims1764576000000 implements MigrationInterface {
  name = 'SessionRenewalClaims1764576000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "browser_sessions" ADD COLUMN "renewal_claimed_until" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "browser_sessions" DROP COLUMN "renewal_claimed_until"`);
  }
}
