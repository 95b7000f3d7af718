import { randomUUID } from 'node:crypto';
import { runCustomersCli } from '../../src/partner-api/customers/cli/customers.command';
import { inRequestScope, RequestRecord } from '../../src/common/domain/request-record';
import { CustomerGateway } from '../../src/partner-api/customers/domain/customer.gateway.port';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildNewCustomer } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { clearSandbox, journal } from '../support/sandbox';

describe('partner API: tenant scoping', () => {
  let t: TestApp;
  let acme: string;
  let globex: string;
  let acmeCustomer: string;

  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createClient('partner', { tenant: 'acme' });
    globex = await t.createClient('partner', { tenant: 'globex' });
    acmeCustomer = await createCustomer(t.baseUrl, acme);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the tenant that created a customer reads its balance, then 200', async () => {
    const answer = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${acmeCustomer}/balance`, { token: acme });

    expect(answer.status).toBe(200);
  });

  it('when another tenant reads its balance, then 404, nothing is sent upstream, and the refusal is audited', async () => {
    const requestId = randomUUID();

    const answer = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${acmeCustomer}/balance`, { token: globex, requestId });

    expect(answer.status).toBe(404);
    expect(answer.body.error!.message).toBe('There is no customer with this id');
    expect(await journal(t.sandbox)).toEqual([]);
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ operation: 'balance.read', phase: 'rejected', http_status: 404, customer_id: acmeCustomer, tenant: 'globex' });
  });

  it('when another tenant opens an account for it, then 404 and nothing is sent upstream, no attempted event', async () => {
    const requestId = randomUUID();

    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
      token: globex,
      body: buildBankAccountRequest({ customer_id: acmeCustomer }),
      requestId,
    });

    expect(answer.status).toBe(404);
    expect(await journal(t.sandbox)).toEqual([]);
    expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['rejected']);
  });

  it('when a customer id is unknown to everyone, then the same 404 as another tenant’s customer', async () => {
    const unknown = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${randomUUID()}/balance`, { token: globex });
    const foreign = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${acmeCustomer}/balance`, { token: globex });

    expect(unknown.status).toBe(404);
    // Each answer's own: its error id, and where the caller's request log shows it.
    const apart = (body: typeof unknown.body) => ({ ...body, error: { ...body.error, id: 'x', request_log_url: 'x' } });
    expect(apart(unknown.body)).toEqual(apart(foreign.body));
  });

  it('when an admin token calls a partner route, then 403', async () => {
    const admin = await t.createClient('admin');

    const answer = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${acmeCustomer}/balance`, { token: admin });

    expect(answer.status).toBe(403);
  });

  describe('customers link', () => {
    async function cli(...argv: string[]) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCustomersCli(argv, { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' }, { out: (l) => out.push(l), err: (l) => err.push(l) });
      return { code, out, err };
    }

    it('when a customer created elsewhere is linked to a tenant, then that tenant may use it and others still may not', async () => {
      const elsewhere = await inRequestScope(new RequestRecord('seed'), () => t.app.get(CustomerGateway).create(buildNewCustomer()));
      const customerId = elsewhere.customerId;
      expect((await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: globex })).status).toBe(404);

      const linked = await cli('link', '--tenant', 'globex', '--customer-id', customerId);

      expect(linked.code).toBe(0);
      expect(JSON.parse(linked.out[0])).toEqual({ customer_id: customerId, tenant: 'globex' });
      expect((await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: globex })).status).toBe(200);
      expect((await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: acme })).status).toBe(404);
    });

    it('when a link is made or refused, then each is an audit event: who ran it, on which customer, for which tenant, and how it ended', async () => {
      const elsewhere = await inRequestScope(new RequestRecord('seed'), () => t.app.get(CustomerGateway).create(buildNewCustomer()));

      await cli('link', '--tenant', 'globex', '--customer-id', elsewhere.customerId);
      await cli('link', '--tenant', 'globex', '--customer-id', acmeCustomer);

      const events: Record<string, unknown>[] = await t.dataSource.query(
        `SELECT phase, customer_id, tenant, route, client_name, error_message FROM audit_events WHERE operation = 'customer.link' AND customer_id = ANY($1) ORDER BY occurred_at`,
        [[elsewhere.customerId, acmeCustomer]],
      );
      expect(events).toEqual([
        {
          phase: 'succeeded',
          customer_id: elsewhere.customerId,
          tenant: 'globex',
          route: 'cli: customers link',
          client_name: expect.stringMatching(/^cli:./),
          error_message: null,
        },
        {
          phase: 'rejected',
          customer_id: acmeCustomer,
          tenant: 'globex',
          route: 'cli: customers link',
          client_name: expect.stringMatching(/^cli:./),
          error_message: 'The customer belongs to another tenant',
        },
      ]);
    });

    it('when the customer belongs to another tenant, then the link is refused and nothing changes', async () => {
      const refused = await cli('link', '--tenant', 'globex', '--customer-id', acmeCustomer);

      expect(refused.code).toBe(1);
      expect(refused.err.join('\n')).toMatch(/another tenant/);
      expect((await callApi(t.baseUrl, 'GET', `/api/v1/customers/${acmeCustomer}/balance`, { token: acme })).status).toBe(200);
    });

    it('when the customer id is not a UUID, then a usage error', async () => {
      const refused = await cli('link', '--tenant', 'globex', '--customer-id', 'nope');

      expect(refused.code).toBe(2);
      expect(refused.err.join('\n')).toMatch(/--customer-id/);
    });
  });
});
