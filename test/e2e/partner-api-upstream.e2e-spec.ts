import { createHash, randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf, wholeAuditLog } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomerPastColdStart } from '../support/http';
import { clearSandbox, injectFault, journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

describe('partner API: the provider failing, and the audit log failing', () => {
  let t: TestApp;
  let partner: string;
  let customerId: string;

  const open = (body: unknown, requestId?: string) => callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body, requestId });
  const balance = (requestId?: string) => callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner, requestId });

  beforeAll(async () => {
    t = await startTestApp({ UPSTREAM_TIMEOUT_MS: '400', UPSTREAM_BREAKER_THRESHOLD: '1000', UPSTREAM_RETRY_MAX: '0' });
    partner = await t.createClient('partner', { name: 'android-app' });
    customerId = await createCustomerPastColdStart(t.baseUrl, partner);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('one terminal event per outcome', () => {
    it('when the provider refuses (4xx), then 502, and the audit says rejected with the provider’s status and error id', async () => {
      await injectFault(t.sandbox, { path: 'account', status: 400, count: 1 });
      const requestId = randomUUID();

      const answer = await open(buildBankAccountRequest({ customer_id: customerId }), requestId);

      expect(answer.status).toBe(502);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events.map((e) => e.phase)).toEqual(['attempted', 'rejected']);
      expect(events[1]).toMatchObject({ http_status: 502, upstream_status: 400, error_id: answer.body.error!.id, upstream_error_id: expect.any(String) });
    });

    it('when the provider’s error id is searched, then the admin query finds the request', async () => {
      await injectFault(t.sandbox, { path: 'account', status: 409, count: 1 });
      const requestId = randomUUID();
      await open(buildBankAccountRequest({ customer_id: customerId }), requestId);
      const upstreamErrorId = (await auditEventsOf(t.dataSource, requestId))[1].upstream_error_id as string;
      const admin = await t.createClient('admin');

      const found = await callApi<{ events: { request_id: string }[] }>(t.baseUrl, 'GET', `/api/v1/audit-events?error_id=${upstreamErrorId}`, { token: admin });

      expect(found.body.data!.events.map((e) => e.request_id)).toEqual([requestId]);
    });

    it('when the provider fails (5xx) on a write, then 502 and unknown: it may have acted', async () => {
      await injectFault(t.sandbox, { path: 'account', status: 503, count: 1 });
      const requestId = randomUUID();

      const answer = await open(buildBankAccountRequest({ customer_id: customerId }), requestId);

      expect(answer.status).toBe(502);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events.map((e) => e.phase)).toEqual(['attempted', 'unknown']);
      expect(events[1]).toMatchObject({ upstream_status: 503, error_id: answer.body.error!.id });
    });

    it('when the provider fails (5xx) on a read, then 502 and failed', async () => {
      await injectFault(t.sandbox, { path: 'balance', status: 500, count: 1 });
      const requestId = randomUUID();

      const answer = await balance(requestId);

      expect(answer.status).toBe(502);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ operation: 'balance.read', phase: 'failed', upstream_status: 500, customer_id: customerId });
    });

    it('when the provider does not answer in time on a read, then 504 and failed', async () => {
      await injectFault(t.sandbox, { path: 'balance', latency_ms: 1000, count: 1 });
      const requestId = randomUUID();

      const answer = await balance(requestId);

      expect(answer.status).toBe(504);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ phase: 'failed', http_status: 504, error_code: 'UPSTREAM.TIMEOUT' });
    });

    it('when the provider does not answer in time on a write, then 504 and unknown', async () => {
      await injectFault(t.sandbox, { path: 'customer$', latency_ms: 1000, count: 1 });
      const requestId = randomUUID();

      const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest(), requestId });

      expect(answer.status).toBe(504);
      expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['attempted', 'unknown']);
    });
  });

  it('when the provider receives a write, then its attempted event is already committed', async () => {
    await injectFault(t.sandbox, { path: 'account', latency_ms: 300, count: 1 });
    const requestId = randomUUID();

    const pending = open(buildBankAccountRequest({ customer_id: customerId }), requestId);
    await waitFor(async () => (await journal(t.sandbox)).length === 1 || undefined);
    const whileInFlight = await auditEventsOf(t.dataSource, requestId);

    expect(whileInFlight.map((e) => e.phase)).toEqual(['attempted']);
    expect((await pending).status).toBe(201);
    expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['attempted', 'succeeded']);
  });

  describe('fail closed', () => {
    it('when the audit table cannot be written, then a write answers 503 and nothing reaches the provider', async () => {
      await t.asOwner('ALTER TABLE audit_events RENAME TO audit_events_away');
      let answer: Awaited<ReturnType<typeof open>>;
      try {
        answer = await open(buildBankAccountRequest({ customer_id: customerId }));
      } finally {
        await t.asOwner('ALTER TABLE audit_events_away RENAME TO audit_events');
      }

      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(await journal(t.sandbox)).toEqual([]);
      expect((await open(buildBankAccountRequest({ customer_id: customerId }))).status).toBe(201);
    });

    it('when the audit table cannot be written, then a read answers 503 too', async () => {
      await t.asOwner('ALTER TABLE audit_events RENAME TO audit_events_away');
      let answer: Awaited<ReturnType<typeof balance>>;
      try {
        answer = await balance();
      } finally {
        await t.asOwner('ALTER TABLE audit_events_away RENAME TO audit_events');
      }

      expect(answer.status).toBe(503);
    });

    it('when the database is down, then writes answer 503 and reach nothing upstream; when it is back, they work without a restart', async () => {
      await t.database.goDown();
      const answers: number[] = [];
      try {
        for (let i = 0; i < 3; i += 1) answers.push((await open(buildBankAccountRequest({ customer_id: customerId }))).status);
        answers.push((await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest() })).status);
      } finally {
        await t.database.comeBack();
      }

      expect(answers).toEqual([503, 503, 503, 503]);
      expect(await journal(t.sandbox)).toEqual([]);
      const requestId = randomUUID();
      expect((await open(buildBankAccountRequest({ customer_id: customerId }), requestId)).status).toBe(201);
      expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['attempted', 'succeeded']);
    });
  });

  it('when a bank account request carries personal data and secrets, then none of it is in the audit log or the logs', async () => {
    const body = buildBankAccountRequest({
      customer_id: customerId,
      document_number: 'ZX9PASSPORT81',
      phone_number: '+4915199912345',
      date_of_birth: '1961-07-04',
      street: 'Quirinstrasse 77 Hinterhaus',
      zip_code: '10997',
      issued_by: 'Bezirksamt Kreuzberg Nord',
    });
    const signature = createHash('sha256')
      .update(t.sandbox.publicKeyPem.trim() + (body.reference as string), 'utf8')
      .digest('hex');
    const publicKeyLine = t.sandbox.publicKeyPem.split('\n')[2];
    const logsBefore = t.logs.text.length;
    const requestId = randomUUID();

    const answer = await open(body, requestId);
    await injectFault(t.sandbox, { path: 'account', status: 400, count: 1 });
    const rejected = await open({ ...body, reference: randomUUID() });

    expect(answer.status).toBe(201);
    expect(rejected.status).toBe(502);
    expect(await auditEventsOf(t.dataSource, requestId)).toHaveLength(2);
    const stored = await wholeAuditLog(t.dataSource);
    const logged = t.logs.text.slice(logsBefore);
    expect(logged.length).toBeGreaterThan(0);
    const secrets = {
      partnerToken: partner,
      upstreamToken: t.sandbox.bearerToken,
      publicKeyLine,
      signature,
      documentNumber: 'ZX9PASSPORT81',
      phone: '4915199912345',
      dateOfBirth: '1961-07-04',
      street: 'Quirinstrasse',
      issuedBy: 'Bezirksamt',
      zip: '"10997"',
    };
    for (const [name, value] of Object.entries(secrets)) {
      expect({ name, inAuditLog: stored.includes(value) }).toEqual({ name, inAuditLog: false });
      expect({ name, inLogs: logged.includes(value) }).toEqual({ name, inLogs: false });
    }
  });
});
