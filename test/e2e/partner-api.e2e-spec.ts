import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { clearSandbox, journal } from '../support/sandbox';

describe('partner API: the happy paths', () => {
  let t: TestApp;
  let partner: string;

  const post = (path: string, body: unknown, requestId?: string) => callApi(t.baseUrl, 'POST', path, { token: partner, body, requestId });
  const get = (path: string, requestId?: string) => callApi(t.baseUrl, 'GET', path, { token: partner, requestId });

  beforeAll(async () => {
    t = await startTestApp();
    partner = await t.createClient('partner', { tenant: 'acme' });
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  it('when a customer is created, then 201 with its id and reference, the provider saw our request id, and the audit has attempted then succeeded', async () => {
    const requestId = randomUUID();
    const body = buildCustomerRequest();

    const created = await post('/api/v1/customers', body, requestId);

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 201, message: 'Customer created', error: null });
    expect(created.body.data).toEqual({ customer_id: expect.stringMatching(/^[0-9a-f-]{36}$/), reference: body.reference });
    const seen = await journal(t.sandbox);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/customer',
      request_id: requestId,
      reference: body.reference,
      signature: 'valid',
      encrypted: true,
    });
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events.map((e) => e.phase)).toEqual(['attempted', 'succeeded']);
    expect(events[1]).toMatchObject({
      operation: 'customer.create',
      reference: body.reference,
      customer_id: created.body.data!.customer_id,
      http_status: 201,
      upstream_status: 201,
      replayed: false,
    });
    expect(events[1].upstream_latency_ms).toEqual(expect.any(Number));
  });

  it('when no reference is sent, then one is generated, returned and used upstream', async () => {
    const { reference: _, ...body } = buildCustomerRequest();

    const created = await post('/api/v1/customers', body);

    expect(created.status).toBe(201);
    const reference = created.body.data!.reference as string;
    expect(reference).toMatch(/^[0-9a-f-]{36}$/);
    expect((await journal(t.sandbox))[0].reference).toBe(reference);
  });

  it('when the balance of an own customer is read, then 200 with decimal strings and one succeeded event', async () => {
    const customerId = await createCustomer(t.baseUrl, partner);
    const requestId = randomUUID();

    const balance = await get(`/api/v1/customers/${customerId}/balance`, requestId);

    expect(balance.status).toBe(200);
    expect(balance.body.data).toMatchObject({ customer_id: customerId, currency: expect.any(String), available: expect.stringMatching(/^-?\d+(\.\d+)?$/) });
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ operation: 'balance.read', phase: 'succeeded', customer_id: customerId, upstream_status: 200 });
  });

  it.each([
    ['EUR', { iban: expect.stringMatching(/^[A-Z]{2}\d{2}[A-Z0-9]+$/) }],
    ['GBP', { sort_code: expect.stringMatching(/^\d{2}-?\d{2}-?\d{2}$/), account_number: expect.stringMatching(/^\d{8}$/) }],
  ])('when a %s account is opened, then 201 with its account details', async (currency, details) => {
    const customerId = await createCustomer(t.baseUrl, partner);
    const body = buildBankAccountRequest({ customer_id: customerId, currency });
    const requestId = randomUUID();

    const opened = await post('/api/v1/bank-accounts', body, requestId);

    expect(opened.status).toBe(201);
    expect(opened.body.data).toMatchObject({ customer_id: customerId, currency, reference: body.reference, ...details });
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events.map((e) => e.phase)).toEqual(['attempted', 'succeeded']);
    expect(events[1]).toMatchObject({ operation: 'bank_account.create', currency, customer_id: customerId, reference: body.reference });
  });
});
