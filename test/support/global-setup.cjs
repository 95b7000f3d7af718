// Runs in Jest's parent process, outside the ESM sandbox, on the compiled service (`npm test`
// builds first): the embedded server is started by the very code the service uses.
const { chmodSync, mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

/** The service's role on an external test server (a login with no rights of its own). */
const EXTERNAL_SERVICE_ROLE = 'pgw_test_service';

/**
 * One PostgreSQL server for the whole run: DATABASE_URL when it is set (the external path), else
 * an embedded one in a temporary directory. Each suite then creates its own database on it
 * (test/support/database.ts), so suites running in parallel never see each other's rows.
 * TEST_POSTGRES_URL is the server's superuser, which owns each test database's schema (as
 * MIGRATIONS_DATABASE_URL would); TEST_SERVICE_URL is the service's own role, as DATABASE_URL.
 */
module.exports = async function globalSetup() {
  // Each project on the database runs this; the first one's server serves them all.
  if (process.env.TEST_POSTGRES_URL) return;
  if (process.env.DATABASE_URL) {
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [EXTERNAL_SERVICE_ROLE]);
      if (found.rowCount === 0) {
        await client
          .query(`CREATE ROLE ${EXTERNAL_SERVICE_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${EXTERNAL_SERVICE_ROLE}'`)
          .catch((error) => {
            if (error.code !== '42710') throw error; // another run created it meanwhile
          });
      }
    } finally {
      await client.end();
    }
    const service = new URL(process.env.DATABASE_URL);
    service.username = EXTERNAL_SERVICE_ROLE;
    service.password = EXTERNAL_SERVICE_ROLE;
    process.env.TEST_POSTGRES_URL = process.env.DATABASE_URL;
    process.env.TEST_SERVICE_URL = service.toString();
    process.stderr.write('\n[tests] PostgreSQL: external, from DATABASE_URL\n');
    return;
  }
  const { acquireEmbeddedDatabase } = require('../../dist/dev/database/embedded-postgres.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-test-'));
  chmodSync(dataDir, 0o755); // reachable by the postgres user when tests run as root
  const log = { info: () => undefined, warn: (m) => process.stderr.write(`[tests] ${m}\n`), debug: () => undefined };
  const handle = await acquireEmbeddedDatabase({ dataDir, port: 0, log });
  globalThis.__embeddedTestDatabase = { handle, dataDir };
  process.env.TEST_POSTGRES_URL = handle.ownerUrl;
  process.env.TEST_SERVICE_URL = handle.url;
  process.stderr.write(`\n[tests] PostgreSQL: ${handle.description}\n`);
};
