import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { clearSandbox, injectFault, journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

/**
 * The database goes away in the middle of a bank account (docs/errors.md, "During a database
 * outage"): an answer the provider gave is held, not lost, and a retry with the same reference
 * gets it, on the replica that held it or on another one; a claim that never reached the provider
 * blocks nothing.
 */
describe('a database outage during provider writes', () => {
  let t: TestApp;
  let replica: TestApp;
  let partner: string;
  let customerId: string;

  const open = (app: TestApp, body: unknown, requestId?: string) => callApi(app.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body, requestId });
  /** The account calls with this reference that reached either replica's provider (each test app starts a sandbox of its own). */
  const callsWith = async (reference: unknown) =>
    [...(await journal(t.sandbox)), ...(await journal(replica.sandbox))].filter((e) => e.path.endsWith('/account') && e.reference === reference);
  /** Opens an account whose provider call is held up, and takes the database away while the provider works on it. */
  const openAcrossAnOutage = async (body: unknown, requestId: string) => {
    await injectFault(t.sandbox, { path: 'account', latency_ms: 800, count: 1 });
    const answer = open(t, body, requestId);
    await waitFor(async () => (await journal(t.sandbox)).some((e) => e.path.endsWith('/account')) || undefined);
    await t.database.goDown();
    try {
      return await answer;
    } finally {
      await t.database.comeBack();
    }
  };

  /** /metrics answers its own token, which the database is not needed to check. */
  const METRICS_TOKEN = randomUUID() + randomUUID();

  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN });
    // A second replica on the same database.
    replica = await startTestApp({}, { database: t.database });
    partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
    await clearSandbox(replica.sandbox);
  });
  afterAll(async () => {
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
  });

  it('finding: when the database goes away after the provider created a customer, then 503 OUTCOME_PENDING; once it is back, a retry gets the 201 replayed, the provider was called once, and the customer is the tenant’s', async () => {
    const body = buildCustomerRequest();
    const createdAt = (app: TestApp) => callApi<{ customer_id: string }>(app.baseUrl, 'POST', '/api/v1/customers', { token: partner, body });
    await injectFault(t.sandbox, { path: '/customer$', method: 'POST', latency_ms: 800, count: 1 });
    const answer = createdAt(t);
    await waitFor(async () => (await journal(t.sandbox)).some((e) => e.path.endsWith('/customer')) || undefined);
    await t.database.goDown();
    let held;
    try {
      held = await answer;
    } finally {
      await t.database.comeBack();
    }

    const retry = await createdAt(t);

    expect([held.status, held.body.error?.code]).toEqual([503, 'IDEMPOTENCY.OUTCOME_PENDING']);
    expect([retry.status, retry.body.error?.code]).toEqual([201, undefined]);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const calls = (await journal(t.sandbox)).filter((e) => e.path.endsWith('/customer') && e.reference === body.reference);
    expect(calls.map((call) => call.status)).toEqual([201]);
    // The customer belongs to the tenant that created it: its balance reads.
    const balance = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${retry.body.data!.customer_id}/balance`, { token: partner });
    expect(balance.status).toBe(200);
  });

  it('when the database goes away after the provider opened the account, then 503 OUTCOME_PENDING; once it is back, a retry gets the original 201, replayed, and the provider was called once', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });
    const requestId = randomUUID();

    const held = await openAcrossAnOutage(body, requestId);
    const retry = await open(t, body);

    expect(held.status).toBe(503);
    expect(held.body.error).toMatchObject({ code: 'IDEMPOTENCY.OUTCOME_PENDING', details: expect.stringContaining('may have completed') });
    expect(held.headers.get('retry-after')).toBe('1');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const calls = await callsWith(body.reference);
    expect(calls).toHaveLength(1);
    expect(calls[0].status).toBe(201);
    // The held answer's event, written late: what the provider did, what the partner was told, under which id.
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events.map((event) => event.phase)).toEqual(['attempted', 'succeeded']);
    expect(events[1]).toMatchObject({ http_status: 503, error_code: 'IDEMPOTENCY.OUTCOME_PENDING', error_id: held.body.error!.id, upstream_status: 201 });
  });

  it('when the retry goes to another replica just as the database comes back, then it waits for the held answer and gets the 201, never IN_FLIGHT', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });

    const held = await openAcrossAnOutage(body, randomUUID());
    const elsewhere = await open(replica, body);

    expect(held.body.error?.code).toBe('IDEMPOTENCY.OUTCOME_PENDING');
    expect([elsewhere.status, elsewhere.body.error?.code]).toEqual([201, undefined]);
    expect(elsewhere.headers.get('idempotent-replayed')).toBe('true');
    expect(await callsWith(body.reference)).toHaveLength(1);
  });

  it('when the database is away before the claim, then 503 and nothing is sent; once it is back, the same reference goes through at once', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });
    await t.database.goDown();
    let refused;
    try {
      refused = await open(t, body);
    } finally {
      await t.database.comeBack();
    }

    const retried = await open(t, body);

    // Which read meets the outage first (the customer's tenant, once forgotten with the database's
    // notifications, or the claim) decides which of the two the refusal names.
    expect(refused.status).toBe(503);
    expect(['DATABASE.UNAVAILABLE', 'AUDIT.UNAVAILABLE']).toContain(refused.body.error?.code);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await callsWith(body.reference)).toHaveLength(1);
  });

  it('when an outcome is held, then /metrics counts it and its age; once written, the count is 0', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });
    const metric = async (name: string) => {
      const text = await (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };

    await injectFault(t.sandbox, { path: 'account', latency_ms: 800, count: 1 });
    const answer = open(t, body);
    await waitFor(async () => (await journal(t.sandbox)).some((e) => e.path.endsWith('/account')) || undefined);
    await t.database.goDown();
    let whileHeld: number[];
    try {
      await answer;
      whileHeld = [await metric('idempotency_held_outcomes'), await metric('idempotency_held_outcome_oldest_age_seconds')];
    } finally {
      await t.database.comeBack();
    }
    await waitFor(async () => (await metric('idempotency_held_outcomes')) === 0 || undefined, { what: 'the held outcome to be written' });

    expect(whileHeld[0]).toBe(1);
    expect(whileHeld[1]).toBeGreaterThanOrEqual(0);
    expect(await metric('idempotency_held_outcome_oldest_age_seconds')).toBe(0);
  });
});
