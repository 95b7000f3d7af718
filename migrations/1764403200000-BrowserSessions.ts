import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Browser sessions of web apps (docs/security.md, "Web apps: the browser session").
 *
 * - `browser_logins`: a login under way, between its start and the provider's callback: found by
 *   the SHA-256 of its `state`, used once, bound to the browser that started it (the SHA-256 of
 *   its login cookie); the PKCE verifier, the nonce and where to return are sealed (AES-256-GCM).
 * - `browser_sessions`: a logged-in browser, found by the SHA-256 of its cookie (the id itself is
 *   never stored); its tokens sealed; its end user by pseudonym; the provider's session (`sid`) by
 *   its SHA-256, for back-channel logout. Rows past either timeout are deleted by a periodic sweep.
 */
export class BrowserSessions1764403200000 implements MigrationInterface {
  name = 'BrowserSessions1764403200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "browser_logins" (
        "state_hash" char(43) PRIMARY KEY,
        "binding_hash" char(43) NOT NULL,
        "sealed" text NOT NULL,
        "expires_at" timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX "browser_logins_expires_at_idx" ON "browser_logins" ("expires_at")`);
    await queryRunner.query(`
      CREATE TABLE "browser_sessions" (
        "id_hash" char(43) PRIMARY KEY,
        "tenant" varchar(64) NOT NULL,
        "end_user" uuid NOT NULL,
        "issuer" varchar(500) NOT NULL,
        "sid_hash" char(43),
        "sealed_tokens" text NOT NULL,
        "access_expires_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL,
        "last_seen_at" timestamptz NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "version" integer NOT NULL DEFAULT 1
      )`);
    await queryRunner.query(`CREATE INDEX "browser_sessions_end_user_idx" ON "browser_sessions" ("end_user")`);
    await queryRunner.query(`CREATE INDEX "browser_sessions_sid_hash_idx" ON "browser_sessions" ("sid_hash") WHERE sid_hash IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "browser_sessions_expires_at_idx" ON "browser_sessions" ("expires_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "browser_sessions"`);
    await queryRunner.query(`DROP TABLE "browser_logins"`);
  }
}
