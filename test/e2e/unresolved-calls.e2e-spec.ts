import { randomUUID } from 'node:crypto';
import { runAuditReconcile } from '../../src/audit/cli/audit-reconcile.command';
import { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomerPastColdStart } from '../support/http';
import { clearSandbox, injectFault, journal } from '../support/sandbox';

interface ListedCall {
  operation: string;
  reference: string;
  customer_id: string | null;
  client: string | null;
  attempted_at: string;
  request_id: string;
  state: string;
  error_id: string | null;
}

describe('calls whose outcome is unknown: reconciliation, and the retry after one', () => {
  let t: TestApp;
  let admin: string;
  let partner: string;
  let customerId: string;

  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

  /**
   * The events a request leaves, as the service writes them, dated minutes back: written as the
   * owner (the service's role may not set occurred_at; the database dates what it writes).
   */
  async function call(
    phases: readonly AuditEvent['phase'][],
    options: { at: Date; reference?: string; operation?: AuditEvent['operation'] } = { at: minutesAgo(5) },
  ) {
    const requestId = randomUUID();
    const reference = options.reference ?? randomUUID();
    let at = options.at.getTime();
    for (const phase of phases) {
      await t.asOwner(
        `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase, reference, customer_id, client_name, error_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'reconcile-test', $8)`,
        [
          randomUUID(),
          new Date(at++),
          requestId,
          options.operation ?? 'bank_account.create',
          phase,
          reference,
          customerId,
          phase === 'unknown' ? randomUUID() : null,
        ],
      );
    }
    return { requestId, reference };
  }

  const listed = async (query = '') => {
    const answer = await callApi<{ calls: ListedCall[]; next_cursor?: string }>(t.baseUrl, 'GET', `/api/v1/unresolved-calls${query}`, { token: admin });
    expect(answer.status).toBe(200);
    return answer.body.data!;
  };

  async function reconcile(args: string[] = []) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditReconcile(
      args,
      { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' },
      { out: (line) => out.push(line), err: (line) => err.push(line) },
    );
    return { code, lines: out.map((line) => JSON.parse(line) as ListedCall), out, err };
  }

  beforeAll(async () => {
    t = await startTestApp({ UPSTREAM_TIMEOUT_MS: '400', UPSTREAM_BREAKER_THRESHOLD: '1000' });
    admin = await t.createClient('admin');
    partner = await t.createClient('partner');
    customerId = await createCustomerPastColdStart(t.baseUrl, partner);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('which calls are listed', () => {
    it('when calls ended every way, then only those attempted without an outcome or with an unknown one are listed, newest first', async () => {
      const crashed = await call(['attempted'], { at: minutesAgo(4) });
      const timedOut = await call(['attempted', 'unknown'], { at: minutesAgo(3) });
      const customer = await call(['attempted'], { at: minutesAgo(2), operation: 'customer.create' });
      await call(['attempted', 'succeeded'], { at: minutesAgo(4) });
      await call(['attempted', 'rejected'], { at: minutesAgo(4) });
      await call(['attempted', 'failed'], { at: minutesAgo(4) });
      // Settled later: a retry with the same reference succeeded.
      const settled = await call(['attempted', 'unknown'], { at: minutesAgo(6) });
      await call(['attempted', 'succeeded'], { at: minutesAgo(5), reference: settled.reference });

      const { calls } = await listed('?since=10m');

      expect(calls.map((c) => [c.request_id, c.state])).toEqual([
        [customer.requestId, 'no_outcome'],
        [timedOut.requestId, 'unknown'],
        [crashed.requestId, 'no_outcome'],
      ]);
      expect(calls[1].error_id).toEqual(expect.any(String));
      expect(calls[0]).toMatchObject({ operation: 'customer.create', reference: customer.reference, client: 'reconcile-test', error_id: null });
      expect(calls[2]).toMatchObject({ operation: 'bank_account.create', customer_id: customerId });
    });

    it('when support searches the audit log for an unresolved call’s reference, then the call stays listed: the search’s own event settles nothing', async () => {
      const stuck = await call(['attempted'], { at: minutesAgo(3) });

      const search = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events?reference=${stuck.reference}&reason=SUP-77`, { token: admin });
      const { calls } = await listed('?since=10m');

      expect(search.status).toBe(200);
      expect(calls.filter((c) => c.reference === stuck.reference).map((c) => c.request_id)).toEqual([stuck.requestId]);
    });

    it('when older_than and since are given, then only attempts between them are listed', async () => {
      const young = await call(['attempted'], { at: minutesAgo(0.1) });
      const middle = await call(['attempted'], { at: minutesAgo(20) });
      const old = await call(['attempted'], { at: minutesAgo(90) });

      const byDefault = (await listed()).calls.map((c) => c.request_id);
      const window = (await listed('?older_than=15m&since=30m')).calls.map((c) => c.request_id);

      expect(byDefault).toEqual(expect.arrayContaining([middle.requestId, old.requestId]));
      expect(byDefault).not.toContain(young.requestId);
      expect(window).toEqual([middle.requestId]);
    });

    it('when there are more than a page, then next_cursor pages through all of them, each once', async () => {
      const whole = (await listed('?since=2h&limit=500')).calls.map((c) => c.request_id);
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await listed(`?since=2h&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        paged.push(...page.calls.map((c) => c.request_id));
        cursor = page.next_cursor;
      } while (cursor);

      expect(whole.length).toBeGreaterThan(2);
      expect(paged).toEqual(whole);
    });

    it('when npm run audit:reconcile runs, then it prints the same calls, one JSON line each, and exits 0', async () => {
      const api = (await listed('?since=2h&limit=500')).calls;

      const { code, lines, err } = await reconcile(['--since', '2h']);

      expect(code).toBe(0);
      expect(lines).toEqual(api);
      expect(err.join('\n')).toContain(`${api.length} calls with an unknown outcome`);
    });

    it('when it is called wrongly, then it exits 2 with the usage and lists nothing', async () => {
      for (const args of [['--older-than', 'soon'], ['--since', '-5m'], ['--since', '1m', '--older-than', '5m'], ['--verbose']]) {
        const { code, out, err } = await reconcile(args);
        expect([args, code, out]).toEqual([args, 2, []]);
        expect(err.join('\n')).toContain('Usage: npm run audit:reconcile');
      }
    });

    it('when a partner asks, or the window is not a duration or is empty, then 403 and 400', async () => {
      const forbidden = await callApi(t.baseUrl, 'GET', '/api/v1/unresolved-calls', { token: partner });
      const bad = await callApi(t.baseUrl, 'GET', '/api/v1/unresolved-calls?older_than=yesterday', { token: admin });
      const empty = await callApi(t.baseUrl, 'GET', '/api/v1/unresolved-calls?older_than=2h&since=1h', { token: admin });

      expect(forbidden.status).toBe(403);
      expect(bad.status).toBe(400);
      expect(bad.body.error!.fields).toEqual([{ field: 'older_than', message: expect.stringContaining('older_than must be a duration') }]);
      expect(empty.status).toBe(400);
      expect(empty.body.error!.fields).toEqual([{ field: 'since', message: 'since must be longer ago than older_than' }]);
    });
  });

  describe('the retry of a reference whose outcome is unknown', () => {
    const open = (body: unknown, requestId?: string) => callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body, requestId });

    it('when the provider kept the timed-out call and refuses the retry, then 409 OUTCOME_UNKNOWN, recorded, and the first call stays listed', async () => {
      await injectFault(t.sandbox, { path: 'account', answer_latency_ms: 800, count: 1 });
      const body = buildBankAccountRequest({ customer_id: customerId });
      const firstId = randomUUID();
      const retryId = randomUUID();

      const first = await open(body, firstId);
      // The provider acted on the first call; its answer came after the gateway stopped waiting.
      expect((await journal(t.sandbox)).filter((e) => e.reference === body.reference).map((e) => e.status)).toEqual([201]);
      const retried = await open(body, retryId);

      expect(first.status).toBe(504);
      expect(retried.status).toBe(409);
      expect(retried.headers.get('retry-after')).toBeNull();
      expect(retried.body.error).toMatchObject({ message: 'An earlier request with this reference reached the provider, and its outcome is not known' });
      expect(retried.body.error!.details).toContain('ask support to settle it');
      const events = await auditEventsOf(t.dataSource, retryId);
      expect(events.map((e) => [e.phase, e.http_status, e.upstream_status, e.error_code])).toEqual([
        ['attempted', null, null, null],
        ['rejected', 409, 409, 'IDEMPOTENCY.OUTCOME_UNKNOWN'],
      ]);
      expect(events[1].error_id).toBe(retried.body.error!.id);
      const { calls } = await listed('?older_than=0s');
      expect(calls.filter((c) => c.reference === body.reference).map((c) => [c.request_id, c.state])).toEqual([[firstId, 'unknown']]);
    });

    it('when the provider refuses a reference the gateway never left unresolved, then it stays the provider’s refusal (502)', async () => {
      await injectFault(t.sandbox, { path: 'account', status: 409, count: 1 });

      const answer = await open(buildBankAccountRequest({ customer_id: customerId }));

      expect(answer.status).toBe(502);
      expect(answer.body.error!.message).toBe('The provider refused the request: it has already seen this reference');
    });
  });
});
