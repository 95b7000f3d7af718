import { randomUUID } from 'node:crypto';
import { acquireEmbeddedDatabase } from '../../dev/database/embedded-postgres';
import type { DatabaseHandle } from '../../src/database/database-handle';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { freePort, scratchDataDir } from '../support/processes';
import { clearSandbox, journal } from '../support/sandbox';

const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined };

/**
 * The database server itself stopped and started again, under a running service: a PostgreSQL of
 * this suite's own, since the shared test server must stay up for the other suites.
 */
describe('audit log fail-closed with the database server stopped', () => {
  let dataDir: string;
  let port: number;
  let server: DatabaseHandle;
  let t: TestApp;
  let partner: string;
  let customerId: string;

  const start = () => acquireEmbeddedDatabase({ dataDir, port, log: quiet, resolveFrom: process.cwd() });

  beforeAll(async () => {
    dataDir = scratchDataDir();
    port = await freePort();
    server = await start();
    const unsupported = () => Promise.reject(new Error('not on a dedicated server'));
    t = await startTestApp(
      {},
      {
        database: {
          url: server.url,
          ownerUrl: server.ownerUrl!,
          name: 'partner_gateway',
          drop: () => Promise.resolve(),
          goDown: unsupported,
          comeBack: unsupported,
        },
      },
    );
    partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
  });
  afterAll(async () => {
    await t.close();
    await server.stop();
  });

  it('when PostgreSQL is stopped, then reads and writes answer 503 and nothing reaches the provider; when it starts again, the service recovers without a restart', async () => {
    await clearSandbox(t.sandbox);
    await server.stop();
    let whileDown: number[];
    try {
      whileDown = [
        (await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body: buildBankAccountRequest({ customer_id: customerId }) })).status,
        (await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner })).status,
        (await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner })).status,
      ];
    } finally {
      server = await start();
    }

    expect(whileDown).toEqual([503, 503, 503]);
    expect(await journal(t.sandbox)).toEqual([]);
    const requestId = randomUUID();
    const back = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
      token: partner,
      body: buildBankAccountRequest({ customer_id: customerId }),
      requestId,
    });
    expect(back.status).toBe(201);
    expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['attempted', 'succeeded']);
  });
});
