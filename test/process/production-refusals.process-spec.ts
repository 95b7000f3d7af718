import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { cleanEnv, runProcess, scratchDataDir } from '../support/processes';

const MAIN = join(process.cwd(), 'dist', 'src', 'main.js');
/** npm start: development's entry point, in sandbox mode here. */
const DEV_MAIN = join(process.cwd(), 'dist', 'dev', 'main.js');
const PURGE = join(process.cwd(), 'dist', 'src', 'audit', 'cli', 'audit-purge.cli.js');

/**
 * The built service started as a deployment would start it with NODE_ENV=production and something
 * missing: it stops before anything else (no database, no sandbox, no key made), with one message
 * naming every problem.
 */
describe('production refuses to start without what it must not make up', () => {
  const dataDir = scratchDataDir();
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('when nothing but NODE_ENV=production is set, then it names sandbox mode, the database and each missing key at once, and makes nothing under DATA_DIR', async () => {
    const result = await runProcess(MAIN, [], cleanEnv({ NODE_ENV: 'production', DATA_DIR: dataDir }));

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (5 problems)');
    expect(result.stderr).toMatch(/UPSTREAM_BASE_URL: required in production \(NODE_ENV=production\): without it the service runs in sandbox mode/);
    expect(result.stderr).toMatch(/DATABASE_URL: required by the service, which uses an external PostgreSQL/);
    expect(result.stderr).toMatch(/AUDIT_SIGNING_KEY: required in production/);
    expect(result.stderr).toMatch(/END_USER_PSEUDONYM_KEY: required in production/);
    expect(result.stderr).toMatch(/DATA_KEY: required in production/);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('when the service (not npm start) has no provider and no database, then it names both, in any mode: the sandbox and the embedded database are development tooling', async () => {
    const result = await runProcess(MAIN, [], cleanEnv({ DATA_DIR: dataDir }));

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (2 problems)');
    expect(result.stderr).toMatch(/UPSTREAM_BASE_URL: required by the service, which calls a real provider/);
    expect(result.stderr).toMatch(/DATABASE_URL: required by the service/);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('when a key variable names a file that does not exist, then start-up names it, whatever the mode (npm start’s sandbox mode too)', async () => {
    const result = await runProcess(
      DEV_MAIN,
      [],
      cleanEnv({ DATA_DIR: dataDir, END_USER_PSEUDONYM_KEY: '/run/secrets/partner-gateway/end-user-pseudonym.key', SESSION_KEY: './session.key' }),
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (2 problems)');
    expect(result.stderr).toContain('END_USER_PSEUDONYM_KEY: END_USER_PSEUDONYM_KEY names a file that does not exist');
    expect(result.stderr).toContain('SESSION_KEY: SESSION_KEY names a file that does not exist');
    expect(existsSync(join(dataDir, 'end-user-pseudonym.key'))).toBe(false);
  });

  it('when audit:purge finds no signing key, then it stops and says so, and makes none', async () => {
    const database = await createTestDatabase();
    try {
      const result = await runProcess(PURGE, [], cleanEnv({ DATA_DIR: dataDir, DATABASE_URL: database.url, MIGRATIONS_DATABASE_URL: database.ownerUrl }));

      expect(result.code).toBe(1);
      expect(result.stderr).toContain('No audit signing key: AUDIT_SIGNING_KEY is not set');
      expect(existsSync(join(dataDir, 'audit-signing-key.pem'))).toBe(false);
    } finally {
      await database.drop();
    }
  });
});
