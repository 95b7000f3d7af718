// Runs in Jest's parent process, outside the ESM sandbox, on the compiled service (`npm test`
// builds first): the embedded server is started by the very code the service uses.
const { chmodSync, mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

/**
 * One PostgreSQL server for the whole run: DATABASE_URL when it is set (the external path), else
 * an embedded one in a temporary directory. Each suite then creates its own database on it
 * (test/support/database.ts), so suites running in parallel never see each other's rows.
 */
module.exports = async function globalSetup() {
  if (process.env.DATABASE_URL) {
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.end();
    process.env.TEST_POSTGRES_URL = process.env.DATABASE_URL;
    process.stderr.write('\n[tests] PostgreSQL: external, from DATABASE_URL\n');
    return;
  }
  const { acquireEmbeddedDatabase } = require('../../dist/src/database/embedded-postgres.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'pgw-test-'));
  chmodSync(dataDir, 0o755); // reachable by the postgres user when tests run as root
  const log = { info: () => undefined, warn: (m) => process.stderr.write(`[tests] ${m}\n`), debug: () => undefined };
  const handle = await acquireEmbeddedDatabase({ dataDir, port: 0, log });
  globalThis.__embeddedTestDatabase = { handle, dataDir };
  process.env.TEST_POSTGRES_URL = handle.url;
  process.stderr.write(`\n[tests] PostgreSQL: ${handle.description}\n`);
};
