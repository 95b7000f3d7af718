import { randomUUID } from 'node:crypto';
import { IdempotencyService } from '../../src/idempotency/domain/idempotency.service';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { clearSandbox, injectFault, journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

describe('partner API: idempotency by reference', () => {
  let t: TestApp;
  let partner: string;
  let customerId: string;

  const open = (body: unknown, requestId?: string, token = partner) => callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token, body, requestId });
  const callsWith = async (reference: unknown) => (await journal(t.sandbox)).filter((e) => e.reference === reference);
  /** Calls that reached the account endpoint; a faulted one is answered before its body is read. */
  const accountCalls = async () => (await journal(t.sandbox)).filter((e) => e.path.endsWith('/account'));

  beforeAll(async () => {
    // The provider call's timeout leaves room for a request held in flight (1.5 s) on a slow machine.
    t = await startTestApp({ UPSTREAM_TIMEOUT_MS: '2500', UPSTREAM_BREAKER_THRESHOLD: '1000' });
    partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the same body is sent again, then the first response is replayed, marked, and the provider is called once', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });
    const first = await open(body);
    const requestId = randomUUID();

    const second = await open(body, requestId);

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data).toEqual(first.body.data);
    expect(await callsWith(body.reference)).toHaveLength(1);
    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ phase: 'succeeded', replayed: true, upstream_status: null, reference: body.reference });
  });

  it('when the same body comes back with its keys in another order, then it is still a replay', async () => {
    const body = buildCustomerRequest();
    await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body });
    const reordered = Object.fromEntries(Object.entries(body).reverse());

    const again = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: reordered });

    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('when a reference is reused with a different body, then 422 and nothing is sent', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId });
    await open(body);

    const reused = await open({ ...body, currency: 'GBP' });

    expect(reused.status).toBe(422);
    expect(reused.body.error!.fields).toEqual([{ field: 'reference', message: expect.stringContaining('different body') }]);
    expect(await callsWith(body.reference)).toHaveLength(1);
  });

  it('when a customer reference is reused for a bank account, then 422', async () => {
    const customer = buildCustomerRequest();
    await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: customer });

    const reused = await open(buildBankAccountRequest({ customer_id: customerId, reference: customer.reference }));

    expect(reused.status).toBe(422);
  });

  it('when the first request is still in flight, then a duplicate gets 409 with Retry-After', async () => {
    // Long enough that the duplicate is answered while the first waits, however slow the machine.
    await injectFault(t.sandbox, { path: 'account', latency_ms: 1500, count: 1 });
    const body = buildBankAccountRequest({ customer_id: customerId });

    const first = open(body);
    await waitFor(async () => (await accountCalls()).length === 1 || undefined);
    const duplicate = await open(body);

    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('retry-after')).toBe('1');
    expect((await first).status).toBe(201);
    expect((await open(body)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('when 50 identical requests arrive at once, then the provider is called exactly once and every answer is the result or 409', async () => {
    await injectFault(t.sandbox, { path: 'account', latency_ms: 150, count: 1 });
    const body = buildBankAccountRequest({ customer_id: customerId });

    const answers = await Promise.all(Array.from({ length: 50 }, () => open(body)));

    expect(await callsWith(body.reference)).toHaveLength(1);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const accounts = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.data!.id));
    expect(accounts.size).toBe(1);
  });

  it('when the provider failed the first attempt, then the retry goes to the provider again with the same reference', async () => {
    await injectFault(t.sandbox, { path: 'account', status: 500, count: 1 });
    const body = buildBankAccountRequest({ customer_id: customerId });

    const first = await open(body);
    const retried = await open(body);

    expect(first.status).toBe(502);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await accountCalls()).map((c) => c.status)).toEqual([500, 201]);
    expect((await callsWith(body.reference)).map((c) => c.status)).toEqual([201]);
  });

  it('when a provider timeout leaves the outcome unknown, then 504, the audit says unknown, and the reference may be retried', async () => {
    await injectFault(t.sandbox, { path: 'account', latency_ms: 3000, status: 500, count: 1 });
    const body = buildBankAccountRequest({ customer_id: customerId });
    const requestId = randomUUID();

    const timedOut = await open(body, requestId);
    const retried = await open(body);

    expect(timedOut.status).toBe(504);
    expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['attempted', 'unknown']);
    expect(retried.status).toBe(201);
    expect(await accountCalls()).toHaveLength(2);
  });

  it('when another client of the same tenant sends a used reference, then 422 before anything is sent, and never the first client’s response', async () => {
    const other = await t.createClient('partner');
    const body = buildCustomerRequest();
    const first = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body });

    const theirs = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: other, body });

    expect(first.status).toBe(201);
    expect(theirs.status).toBe(422);
    expect(theirs.body.data).toBeNull();
    expect(theirs.body.error?.fields).toEqual([{ field: 'reference', message: 'reference was already used by another client' }]);
    expect(JSON.stringify(theirs.body)).not.toContain(first.body.data!.customer_id as string);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await callsWith(body.reference as string)).toHaveLength(1);
  });

  it('when another client sends a used reference while the first is still in flight, then it is refused as well', async () => {
    const other = await t.createClient('partner');
    const body = buildCustomerRequest();
    await injectFault(t.sandbox, { method: 'POST', latency_ms: 1500, count: 1 });
    let firstAnswered = false;
    const first = callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body }).finally(() => (firstAnswered = true));
    // In flight: it has reached the provider, which holds it (before reading its body) for 1.5 s.
    await waitFor(async () => (await journal(t.sandbox)).some((e) => e.method === 'POST' && e.path.endsWith('/customer')) || undefined);

    const theirs = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: other, body });

    expect(firstAnswered).toBe(false);
    expect(theirs.status).toBe(422);
    expect((await first).status).toBe(201);
    expect(await callsWith(body.reference as string)).toHaveLength(1);
  });

  it('when a key has expired, then the purge removes it and the reference is new again', async () => {
    const body = buildCustomerRequest();
    await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body });
    // Back-date the key past IDEMPOTENCY_TTL_HOURS.
    await t.dataSource.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 minute' WHERE reference = $1`, [body.reference]);

    const purged = await t.app.get(IdempotencyService).purgeExpired();

    expect(purged).toBeGreaterThanOrEqual(1);
    const rows: unknown[] = await t.dataSource.query('SELECT 1 FROM idempotency_keys WHERE reference = $1', [body.reference]);
    expect(rows).toEqual([]);
  });

  it('when a key is stored, then it keeps IDEMPOTENCY_TTL_HOURS (24 by default) and holds no request field', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId, document_number: 'DOC-KEY-777' });
    await open(body);

    const rows: { ttl_hours: number; row: string }[] = await t.dataSource.query(
      `SELECT round(extract(epoch FROM expires_at - created_at) / 3600) AS ttl_hours, row_to_json(k)::text AS row FROM idempotency_keys k WHERE reference = $1`,
      [body.reference],
    );
    expect(Number(rows[0].ttl_hours)).toBe(24);
    expect(rows[0].row).not.toContain('DOC-KEY-777');
    expect(rows[0].row).not.toContain(body.phone_number as string);
  });
});
