import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { Answer, callApi, createCustomer } from '../support/http';
import { newIssuerKey, TEST_AUDIENCE, TestIssuer } from '../support/oidc';
import { SCAN_PER_PAGE } from '../../src/audit/requests/persistence/postgres-request-log.repository';
import { clearSandbox, injectFault, journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

const STAFF_AUDIENCE = 'urn:partner-gateway:staff';

interface LoggedRequest {
  request_id: string;
  occurred_at: string;
  method: string | null;
  route: string | null;
  operation: string;
  outcome: string;
  status: number | null;
  error: { code: string; id: string | null; message: string | null; doc_url: string } | null;
  caller: { kind: string; client_id: string | null; client_name: string | null };
  reference: string | null;
  customer_id: string | null;
  replayed: boolean;
  provider: { status: number | null; latency_ms: number | null; error_id: string | null } | null;
  log_url: string;
}

interface Timeline extends LoggedRequest {
  events: { id: string; phase: string; status: number | null; error_code: string | null; error_id: string | null }[];
  provider_attempts: { retry: number; status: number | null; latency_ms: number; error_id: string | null; failure: string | null }[];
  replay_of: { request_id: string; log_url: string } | null;
  settled_by: { request_id: string; log_url: string } | null;
  id_reused: boolean;
}

type ErrorBody = { error: { id: string; code: string; request_log_url?: string } };

describe('request logs: a partner’s own requests, and what became of each', () => {
  let t: TestApp;
  let endUsers: TestIssuer;
  let company: TestIssuer;
  let acme: string;
  let globex: string;
  let customerId: string;

  const list = (query = '', token = acme) =>
    callApi<{ requests: LoggedRequest[]; next_cursor: string | null }>(t.baseUrl, 'GET', `/api/v1/requests${query}`, { token });
  const timeline = (requestId: string, token = acme) => callApi<Timeline>(t.baseUrl, 'GET', `/api/v1/requests/${encodeURIComponent(requestId)}`, { token });
  const open = (body: unknown, requestId: string = randomUUID()) => callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body, requestId });
  const balance = (requestId: string = randomUUID(), customer = customerId) =>
    callApi(t.baseUrl, 'GET', `/api/v1/customers/${customer}/balance`, { token: acme, requestId });
  /** The log's entry of one request, found by its id in the newest page. */
  const entryOf = async (requestId: string): Promise<LoggedRequest | undefined> =>
    (await list('?limit=100')).body.data!.requests.find((request) => request.request_id === requestId);

  beforeAll(async () => {
    endUsers = await TestIssuer.start();
    company = await TestIssuer.start();
    t = await startTestApp({
      UPSTREAM_TIMEOUT_MS: '2500',
      UPSTREAM_RETRY_MAX: '2',
      UPSTREAM_BREAKER_THRESHOLD: '1000',
      ERROR_DOCS_URL: 'https://docs.partner.example/errors',
      OIDC_ISSUER: endUsers.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      STAFF_OIDC_ISSUER: company.issuer,
      STAFF_OIDC_AUDIENCE: STAFF_AUDIENCE,
      STAFF_ROLES_CLAIM: 'gw_groups',
      STAFF_ROLE_MAP: JSON.stringify({ 'GW-Support': 'support' }),
    });
    acme = await t.createClient('partner', { name: 'acme-backend', tenant: 'default' });
    globex = await t.createClient('partner', { name: 'globex-backend', tenant: 'globex' });
    customerId = await createCustomer(t.baseUrl, acme);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t?.close();
    await endUsers?.close();
    await company?.close();
  });

  describe('every outcome, as the partner was answered', () => {
    it.each([
      ['200, a balance read', () => balance(), 200, 'succeeded', null],
      [
        '201, a customer created',
        () => callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: acme, body: buildCustomerRequest(), requestId: randomUUID() }),
        201,
        'succeeded',
        null,
      ],
      ['400, a refused body', () => open(buildBankAccountRequest({ customer_id: customerId, currency: 'XXX' })), 400, 'rejected', 'REQUEST.VALIDATION_FAILED'],
      ['404, a customer of nobody’s', () => balance(randomUUID(), randomUUID()), 404, 'rejected', 'CUSTOMER.NOT_FOUND'],
    ] as const)(
      'when the partner was answered %s, then its log lists the request with that status, outcome and error',
      async (_, call, status, outcome, code) => {
        const answer = (await call()) as Answer<unknown> & { body: Partial<ErrorBody> };
        const id = answer.headers.get('x-request-id')!;

        expect(answer.status).toBe(status);
        const entry = await entryOf(id);
        expect(entry).toMatchObject({
          request_id: id,
          status,
          outcome,
          caller: { kind: 'partner', client_name: 'acme-backend' },
          log_url: `/api/v1/requests/${id}`,
        });
        if (code === null) {
          expect(entry!.error).toBeNull();
        } else {
          expect(entry!.error).toEqual({
            code,
            id: answer.body.error.id,
            message: expect.any(String),
            doc_url: `https://docs.partner.example/errors#${code.toLowerCase().replace(/[._]/g, '-')}`,
          });
        }
      },
    );

    it('when a reference is reused with another body, then the 422 is listed with its error id', async () => {
      const body = buildBankAccountRequest({ customer_id: customerId });
      expect((await open(body)).status).toBe(201);
      const reused = await open({ ...body, currency: 'GBP' });

      expect(reused.status).toBe(422);
      expect((await entryOf(reused.headers.get('x-request-id')!))!.error).toMatchObject({ code: 'IDEMPOTENCY.REFERENCE_REUSED', id: reused.body.error!.id });
    });

    it('when a duplicate arrives while the first is in flight, then its 409 is listed, and the first shows its attempted event and its success', async () => {
      // Longer than a duplicate waits for the first to end (then it would be a replay), within the provider call's timeout.
      await injectFault(t.sandbox, { path: 'account', latency_ms: 1500, count: 1 });
      const body = buildBankAccountRequest({ customer_id: customerId });
      const firstId = randomUUID();
      const first = open(body, firstId);
      await waitFor(async () => (await journal(t.sandbox)).some((entry) => entry.path.endsWith('/account')) || undefined);

      const duplicate = await open(body);

      expect([duplicate.status, duplicate.headers.get('idempotent-replayed')]).toEqual([409, null]);
      expect((await entryOf(duplicate.headers.get('x-request-id')!))!).toMatchObject({
        status: 409,
        outcome: 'rejected',
        error: { code: 'IDEMPOTENCY.IN_FLIGHT' },
      });
      expect((await first).status).toBe(201);
      const whole = (await timeline(firstId)).body.data!;
      expect(whole.events.map((event) => event.phase)).toEqual(['attempted', 'succeeded']);
      expect(whole.provider_attempts).toEqual([{ retry: 0, status: 201, latency_ms: expect.any(Number), error_id: null, failure: null }]);
    });

    it('when the same body is sent again, then the replay’s timeline names the request it replays', async () => {
      const body = buildBankAccountRequest({ customer_id: customerId });
      const originalId = randomUUID();
      expect((await open(body, originalId)).status).toBe(201);

      const replay = await open(body);

      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const whole = (await timeline(replay.headers.get('x-request-id')!)).body.data!;
      expect(whole).toMatchObject({
        replayed: true,
        provider: null,
        provider_attempts: [],
        replay_of: { request_id: originalId, log_url: `/api/v1/requests/${originalId}` },
      });
    });

    it('when the provider refuses a write, then the 502 shows the provider’s status and error id, and its one attempt', async () => {
      await injectFault(t.sandbox, { path: 'account', status: 400, count: 1 });

      const answer = await open(buildBankAccountRequest({ customer_id: customerId }));

      expect(answer.status).toBe(502);
      const whole = (await timeline(answer.headers.get('x-request-id')!)).body.data!;
      expect(whole).toMatchObject({ outcome: 'rejected', status: 502, provider: { status: 400, error_id: expect.any(String) } });
      expect(whole.provider_attempts).toEqual([{ retry: 0, status: 400, latency_ms: expect.any(Number), error_id: whole.provider!.error_id, failure: null }]);
    });

    it('when a write times out (504, unknown) and its retry with the same reference succeeds, then the first request’s timeline is settled by the second', async () => {
      // The provider holds the request past the gateway's timeout, then drops it: it never acted.
      await injectFault(t.sandbox, { path: 'account', latency_ms: 3500, drop: true, count: 1 });
      const body = buildBankAccountRequest({ customer_id: customerId });
      const firstId = randomUUID();

      const timedOut = await open(body, firstId);
      expect(timedOut.status).toBe(504);
      const before = (await timeline(firstId)).body.data!;
      expect(before).toMatchObject({ outcome: 'unknown', status: 504, error: { code: 'UPSTREAM.TIMEOUT', id: timedOut.body.error!.id }, settled_by: null });
      expect(before.events.map((event) => event.phase)).toEqual(['attempted', 'unknown']);
      expect(before.provider_attempts).toEqual([{ retry: 0, status: null, latency_ms: expect.any(Number), error_id: null, failure: 'timeout' }]);

      const retryId = randomUUID();
      const retried = await open(body, retryId);

      expect(retried.status).toBe(201);
      expect((await timeline(firstId)).body.data!.settled_by).toEqual({
        request_id: retryId,
        occurred_at: expect.any(String),
        log_url: `/api/v1/requests/${retryId}`,
      });
    });

    it('when a read is retried after the provider’s 503s, then its timeline shows each attempt with its status and the provider’s error id', async () => {
      await injectFault(t.sandbox, { path: 'balance', status: 503, count: 2 });
      const requestId = randomUUID();

      expect((await balance(requestId)).status).toBe(200);

      const whole = (await timeline(requestId)).body.data!;
      expect(whole.provider_attempts.map((attempt) => [attempt.retry, attempt.status, attempt.failure])).toEqual([
        [0, 503, null],
        [1, 503, null],
        [2, 200, null],
      ]);
      expect(whole.provider_attempts.slice(0, 2).every((attempt) => typeof attempt.error_id === 'string' && attempt.error_id.length > 0)).toBe(true);
      expect(whole.provider_attempts[2].error_id).toBeNull();
      // Sealed with the event: the attempts are a column of the audit log.
      const [event] = await auditEventsOf(t.dataSource, requestId);
      expect((event.upstream_attempts as unknown[]).length).toBe(3);
    });
  });

  describe('a caller that reuses its X-Request-Id', () => {
    it('when a request id names a success and a later attempt that never ended, then the attempt stays listed, and a success with its reference settles it', async () => {
      const requestId = `reused-${randomUUID()}`;
      expect((await open(buildBankAccountRequest({ customer_id: customerId }), requestId)).status).toBe(201);
      // The same id, another write, attempted; the process stopped before its answer (as the service writes an attempt).
      const lost = buildBankAccountRequest({ customer_id: customerId });
      await t.dataSource.query(
        `INSERT INTO audit_events (id, request_id, client_id, client_name, caller_kind, tenant, operation, phase, http_method, route, reference, customer_id, currency)
         SELECT gen_random_uuid(), $1::varchar, client_id, client_name, caller_kind, tenant, operation, 'attempted', http_method, route, $2::uuid, customer_id, currency
           FROM audit_events WHERE request_id = $1::varchar AND phase = 'succeeded'`,
        [requestId, lost.reference],
      );

      const listed = (await list(`?reference=${String(lost.reference)}`)).body.data!.requests;
      const before = (await timeline(requestId)).body.data!;

      expect(listed.map((request) => [request.request_id, request.outcome])).toEqual([[requestId, 'no_outcome']]);
      expect(before).toMatchObject({ id_reused: true, settled_by: null });
      expect(before.events.map((event) => event.phase)).toEqual(['attempted', 'succeeded', 'attempted']);

      const retryId = randomUUID();
      expect((await open(lost, retryId)).status).toBe(201);
      expect((await timeline(requestId)).body.data!.settled_by).toMatchObject({ request_id: retryId });
    });
  });

  describe('errors point to their log', () => {
    it('when a partner’s request fails, then error.request_log_url resolves, with the partner’s token, to that request and its error id', async () => {
      const answer = (await open(buildBankAccountRequest({ customer_id: customerId, currency: 'XXX' }))) as Answer<unknown> & { body: ErrorBody };

      expect(answer.status).toBe(400);
      const address = answer.body.error.request_log_url!;
      expect(address).toBe(`/api/v1/requests/${answer.headers.get('x-request-id')}`);
      const followed = await callApi<Timeline>(t.baseUrl, 'GET', address, { token: acme });
      expect(followed.status).toBe(200);
      expect(followed.body.data).toMatchObject({ request_id: answer.headers.get('x-request-id'), error: { id: answer.body.error.id } });
    });

    it('when a request carries no valid credentials, then its error has no log address: nobody’s log holds it', async () => {
      const answer = (await callApi(t.baseUrl, 'GET', '/api/v1/requests', { token: 'not-a-token' })) as Answer<unknown> & { body: ErrorBody };

      expect(answer.status).toBe(401);
      expect(answer.body.error.request_log_url).toBeUndefined();
    });

    it('when an end user’s request fails, then its error points to the partner’s log, where it appears under the end user’s pseudonym', async () => {
      const token = await endUsers.token({ sub: `someone-${randomUUID()}` });
      const answer = (await callApi(t.baseUrl, 'GET', `/api/v1/customers/${randomUUID()}/balance`, { token })) as Answer<unknown> & { body: ErrorBody };

      expect(answer.status).toBe(404);
      const logged = await callApi<Timeline>(t.baseUrl, 'GET', answer.body.error.request_log_url!, { token: acme });
      expect(logged.body.data!.caller).toEqual({ kind: 'end_user', client_id: expect.stringMatching(/^[0-9a-f-]{36}$/), client_name: 'end-user' });
      expect(JSON.stringify(logged.body.data)).not.toContain('someone-');
    });
  });

  describe('nobody else’s', () => {
    it('when another tenant asks for a request, then 404 as for one that never was, and its list never holds it', async () => {
      const requestId = randomUUID();
      await balance(requestId);

      const theirs = await timeline(requestId, globex);
      const never = await timeline(randomUUID(), globex);

      expect([theirs.status, theirs.body.error!.code]).toEqual([404, 'REQUEST_LOG.NOT_FOUND']);
      expect([never.status, never.body.error!.code]).toEqual([404, 'REQUEST_LOG.NOT_FOUND']);
      expect((await list('?limit=100', globex)).body.data!.requests.map((request) => request.request_id)).not.toContain(requestId);
    });

    it.each([
      ['an end user', () => endUsers.token()],
      [
        'a staff member',
        () => company.token({ aud: STAFF_AUDIENCE, sub: 'emp-1', name: 'Sam', gw_groups: ['GW-Support'], amr: ['pwd', 'hwk'], scope: undefined }),
      ],
      ['an admin client', () => t.createClient('admin')],
    ])('when %s asks for the request log, then 403', async (_, tokenOf) => {
      const token = await tokenOf();

      expect((await list('', token)).status).toBe(403);
      expect((await timeline(randomUUID(), token)).status).toBe(403);
    });

    it('when a token of another issuer’s key asks, then 401', async () => {
      const forged = await endUsers.token({}, { key: await newIssuerKey() });

      expect((await list('', forged)).status).toBe(401);
    });
  });

  describe('filters and pages', () => {
    it('when filtered by error_id, status class, error code, reference and customer, then each finds exactly its requests', async () => {
      const body = buildBankAccountRequest({ customer_id: customerId, currency: 'XXX' });
      const refused = await open(body);
      const errorId = refused.body.error!.id;
      const id = refused.headers.get('x-request-id')!;

      const ids = async (query: string) => (await list(query)).body.data!.requests.map((request) => request.request_id);

      expect(await ids(`?error_id=${errorId}`)).toEqual([id]);
      expect(await ids(`?reference=${String(body.reference).toUpperCase()}`)).toEqual([id]);
      expect(await ids(`?status=400&error_code=REQUEST.VALIDATION_FAILED&limit=100`)).toContain(id);
      expect(await ids(`?status_class=2xx&limit=100`)).not.toContain(id);
      expect((await list(`?customer_id=${customerId}&limit=100`)).body.data!.requests.every((request) => request.customer_id === customerId)).toBe(true);
    });

    it('when paged with next_cursor, then every request comes once, newest first', async () => {
      for (let i = 0; i < 5; i++) await balance();
      const seen: string[] = [];
      let cursor: string | null = null;
      let times: string[] = [];
      do {
        const page: Answer<{ requests: LoggedRequest[]; next_cursor: string | null }> = await list(
          `?limit=2&operation=balance.read${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...page.body.data!.requests.map((request) => request.request_id));
        times = [...times, ...page.body.data!.requests.map((request) => request.occurred_at)];
        cursor = page.body.data!.next_cursor;
      } while (cursor);

      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeGreaterThanOrEqual(5);
      expect([...times].sort().reverse()).toEqual(times);
    });

    it('when a filter matches little of a large log, then each page reads a bounded stretch of it, and paging on finds each match once, however the log grows meanwhile', async () => {
      const tenant = `large-${randomUUID()}`;
      const partner = await t.createClient('partner', { tenant });
      const insert = (count: number, status: number, code: string | null) =>
        t.dataSource.query(
          `INSERT INTO audit_events (id, request_id, client_id, client_name, caller_kind, tenant, operation, phase, http_method, route, http_status, error_code)
           SELECT gen_random_uuid(), 'bulk-' || g || '-' || $4::varchar, gen_random_uuid(), 'bulk', 'partner', $1::varchar, 'balance.read',
                  CASE WHEN $2::int < 400 THEN 'succeeded' ELSE 'rejected' END, 'GET', '/api/v1/customers/:customer_id/balance', $2::int, $3::varchar
             FROM generate_series(1, $5::int) AS g`,
          [tenant, status, code, randomUUID(), count],
        );
      // Three matches, oldest first, each 1,500 of the tenant's other requests apart: the oldest lies beyond one page's reading.
      for (let i = 0; i < 3; i++) {
        await insert(1, 404, 'CUSTOMER.NOT_FOUND');
        if (i < 2) await insert(1500, 200, null);
      }

      const pages: { requests: LoggedRequest[]; next_cursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const page: Answer<{ requests: LoggedRequest[]; next_cursor: string | null }> = await list(
          `?status=404&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          partner,
        );
        pages.push(page.body.data!);
        cursor = page.body.data!.next_cursor;
        // The log grows while the partner pages: new requests, a match among them, newer than every page.
        await insert(300, 200, null);
        await insert(1, 404, 'CUSTOMER.NOT_FOUND');
      } while (cursor && pages.length < 10);

      const seen = pages.flatMap((page) => page.requests.map((request) => request.request_id));
      expect(pages.map((page) => page.requests.length)).toEqual([1, 1, 1]);
      expect(new Set(seen).size).toBe(3);
      expect(pages.at(-1)!.next_cursor).toBeNull();
    });

    it('when nothing matches in a large log, then a page comes back empty with a cursor, and paging on ends', async () => {
      const tenant = `large-${randomUUID()}`;
      const partner = await t.createClient('partner', { tenant });
      await t.dataSource.query(
        `INSERT INTO audit_events (id, request_id, client_id, client_name, caller_kind, tenant, operation, phase, http_status)
         SELECT gen_random_uuid(), 'bulk-' || g, gen_random_uuid(), 'bulk', 'partner', $1::varchar, 'balance.read', 'succeeded', 200 FROM generate_series(1, $2::int) AS g`,
        [tenant, SCAN_PER_PAGE + 10],
      );

      const first = (await list('?status_class=5xx', partner)).body.data!;
      const second = (await list(`?status_class=5xx&cursor=${first.next_cursor}`, partner)).body.data!;

      expect(first).toEqual({ requests: [], next_cursor: expect.any(String) });
      expect(second).toEqual({ requests: [], next_cursor: null });
    });

    /** `count` balance reads of `customerId` by a client of `tenant` (404s when the customer is not the tenant's). */
    const readsOf = (tenant: string, customerId: string, count: number, status = 200) =>
      t.dataSource.query(
        `INSERT INTO audit_events (id, request_id, client_id, client_name, caller_kind, tenant, operation, phase, http_status, customer_id)
         SELECT gen_random_uuid(), 'bulk-' || g, gen_random_uuid(), 'bulk', 'partner', $1::varchar, 'balance.read', $4::varchar, $3::int, $2::uuid
           FROM generate_series(1, $5::int) AS g`,
        [tenant, customerId, status, status < 400 ? 'succeeded' : 'rejected', count],
      );

    it('finding: when a customer has more events than a page reads and nothing matches, then a page reads no more than the others (empty, with a cursor), and paging on ends', async () => {
      const tenant = `busy-${randomUUID()}`;
      const partner = await t.createClient('partner', { tenant });
      const customerId = randomUUID();
      await readsOf(tenant, customerId, SCAN_PER_PAGE + 10);

      const first = (await list(`?customer_id=${customerId}&status_class=5xx`, partner)).body.data!;
      const second = (await list(`?customer_id=${customerId}&status_class=5xx&cursor=${first.next_cursor}`, partner)).body.data!;

      expect(first).toEqual({ requests: [], next_cursor: expect.any(String) });
      expect(second).toEqual({ requests: [], next_cursor: null });
    });

    it('finding: when another tenant reads a customer id many times (404s), then a page of the owner’s log by that customer reads no more than the others, and still finds the owner’s requests', async () => {
      const tenant = `owner-${randomUUID()}`;
      const partner = await t.createClient('partner', { tenant });
      const customerId = randomUUID();
      await readsOf(tenant, customerId, 3);
      await readsOf(`other-${randomUUID()}`, customerId, SCAN_PER_PAGE + 10, 404);

      const pages: { requests: LoggedRequest[]; next_cursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const page: Answer<{ requests: LoggedRequest[]; next_cursor: string | null }> = await list(
          `?customer_id=${customerId}${cursor ? `&cursor=${cursor}` : ''}`,
          partner,
        );
        pages.push(page.body.data!);
        cursor = page.body.data!.next_cursor;
      } while (cursor && pages.length < 10);

      expect(pages[0]).toEqual({ requests: [], next_cursor: expect.any(String) });
      expect(pages.flatMap((page) => page.requests).map((request) => request.customer_id)).toEqual([customerId, customerId, customerId]);
      expect(pages.at(-1)!.next_cursor).toBeNull();
    });

    it('when a customer’s events fit in one reading, then the filter pages as before: full pages, the newest first, no empty page', async () => {
      const tenant = `small-${randomUUID()}`;
      const partner = await t.createClient('partner', { tenant });
      const customerId = randomUUID();
      await readsOf(tenant, customerId, 5);

      const first = (await list(`?customer_id=${customerId}&limit=3`, partner)).body.data!;
      const second = (await list(`?customer_id=${customerId}&limit=3&cursor=${first.next_cursor}`, partner)).body.data!;

      expect([first.requests.length, second.requests.length, second.next_cursor]).toEqual([3, 2, null]);
    });

    it.each([
      ['?status=99', 'status'],
      ['?status_class=6xx', 'status_class'],
      ['?error_code=NOPE', 'error_code'],
      ['?from=2026-02-30', 'from'],
      ['?limit=101', 'limit'],
      ['?reference=not-a-uuid', 'reference'],
      ['?unknown=1', 'unknown'],
    ])('when the query is %s, then 400 naming %s', async (query, field) => {
      const answer = await list(query);

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields!.map((problem) => problem.field)).toContain(field);
    });

    it('when the cursor is not one the service issued, then 400 AUDIT.INVALID_CURSOR', async () => {
      expect((await list('?cursor=bm9wZQ')).body.error!.code).toBe('AUDIT.INVALID_CURSOR');
    });
  });

  describe('reading the log is itself recorded', () => {
    it('when the partner lists its requests, then the read is an audit event, listed only when asked for', async () => {
      const read = await list();
      const id = read.headers.get('x-request-id')!;

      expect(await auditEventsOf(t.dataSource, id)).toEqual([
        expect.objectContaining({ operation: 'request_log.list', phase: 'succeeded', tenant: 'default' }),
      ]);
      expect((await list('?limit=100')).body.data!.requests.map((request) => request.request_id)).not.toContain(id);
      expect((await list('?operation=request_log.list')).body.data!.requests.map((request) => request.request_id)).toContain(id);
    });
  });

  describe('nothing the body carried', () => {
    /** Every string in an answer, at any depth. */
    const stringsOf = (value: unknown): string[] =>
      typeof value === 'string'
        ? [value]
        : Array.isArray(value)
          ? value.flatMap(stringsOf)
          : value && typeof value === 'object'
            ? Object.values(value).flatMap(stringsOf)
            : [];

    it('when bodies hold arbitrary values, then no field of the log’s answers holds one (but the reference and customer id the log names)', async () => {
      const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
      const fields = ['first_name', 'last_name', 'email', 'phone_number', 'date_of_birth', 'country'];
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.constantFrom(...fields), text, { minKeys: 1 }), fc.boolean(), async (changes, extra) => {
          const body: Record<string, unknown> = { ...buildCustomerRequest(), ...changes, ...(extra ? { secret_note: `note-${randomUUID()}` } : {}) };
          const requestId = randomUUID();
          await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: acme, body, requestId });

          const answers = [(await timeline(requestId)).body.data, (await list(`?limit=5&operation=customer.create`)).body.data];
          const shown = answers.flatMap(stringsOf);
          const carried = Object.entries(body)
            .filter(([key, value]) => key !== 'reference' && key !== 'customer_id' && typeof value === 'string')
            .map(([, value]) => value as string);
          for (const value of carried) {
            expect(shown).not.toContain(value);
            if (value.length >= 5) expect(shown.filter((string) => string.includes(value))).toEqual([]);
          }
        }),
        { numRuns: 30 },
      );
    });
  });
});

describe('request logs: a budget of their own', () => {
  let t: TestApp;
  let partner: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_REQUEST_LOG_PER_MINUTE: '3' });
    partner = await t.createClient('partner');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('when a partner reads its log more often than RATE_LIMIT_REQUEST_LOG_PER_MINUTE, then 429 naming the log’s policy, and the refused reads do not use up its other calls’ budget', async () => {
    const read = () => callApi(t.baseUrl, 'GET', '/api/v1/requests', { token: partner });
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await read());
    const refused = [];
    for (let i = 0; i < 5; i++) refused.push(await read());
    const other = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner });

    expect(reads.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(reads[2].headers.get('ratelimit-policy')).toBe('"per-client";q=10;w=60, "request-log";q=3;w=60');
    expect(reads[2].headers.get('ratelimit')).toMatch(/^"per-client";r=7;t=\d+, "request-log";r=0;t=\d+$/);
    expect(refused.map((answer) => answer.status)).toEqual([429, 429, 429, 429, 429]);
    expect(refused[0].headers.get('ratelimit-policy')).toBe('"request-log";q=3;w=60');
    expect(refused[0].body.error!.details).toBe('At most 3 reads of the request log per minute per caller');
    // Three reads and this call: the five refused reads were not counted against the caller.
    expect([other.status, other.headers.get('x-ratelimit-remaining')]).toEqual([200, '6']);
  });
});
