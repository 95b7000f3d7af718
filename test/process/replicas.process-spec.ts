import { randomUUID } from 'node:crypto';
import { runAuditReconcile } from '../../src/audit/cli/audit-reconcile.command';
import { longestProviderCallMs } from '../../src/config/provider-call';
import { CLAIM_MARGIN_MS, WRITES_MARGIN_MS } from '../../src/idempotency/idempotency.module';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { Answer, callApi, createCustomer } from '../support/http';
import { startReplicas, ReplicaSet } from '../support/replicas';
import { injectFault, journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

/**
 * Three gateway processes behind one (imaginary) load balancer, as docs/operations.md describes:
 * one PostgreSQL, one provider, and one Redis where a Redis answers (TEST_REDIS_URL).
 */
const UPSTREAM_TIMEOUT_MS = 3000;
/** The claim's lease the service derives (idempotency.module.ts): the longest provider call, and a margin. */
const LEASE_MS = longestProviderCallMs({ UPSTREAM_TIMEOUT_MS, UPSTREAM_RETRY_MAX: 0 }) + CLAIM_MARGIN_MS;
/** How long a claim counts as in flight (the longest a request can take), shorter than its lease. */
const WORK_MS = longestProviderCallMs({ UPSTREAM_TIMEOUT_MS, UPSTREAM_RETRY_MAX: 0 }) + WRITES_MARGIN_MS;

describe('three replicas serving together', () => {
  let set: ReplicaSet;
  let partner: string;
  let customerId: string;

  const [a, b, c] = [0, 1, 2];
  const base = (i: number) => set.replicas[i].base;

  beforeAll(async () => {
    set = await startReplicas(3, {
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      UPSTREAM_RETRY_MAX: '0',
      UPSTREAM_BREAKER_THRESHOLD: '1000',
      ...(process.env.TEST_REDIS_URL ? { RATE_LIMIT_REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    });
    partner = await set.createClient('partner');
    customerId = await createCustomer(base(a), partner);
  }, 120_000);
  afterAll(async () => {
    await set?.close();
  });

  it('when duplicates of one write arrive at all three at once, then the provider is called once and every answer is its result or 409', async () => {
    await injectFault(set.sandbox, { path: 'customer$', method: 'POST', latency_ms: 300, count: 1 });
    const body = buildCustomerRequest();

    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => callApi(base(i % 3), 'POST', '/api/v1/customers', { token: partner, body })));

    expect((await journal(set.sandbox)).filter((entry) => entry.reference === body.reference)).toHaveLength(1);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const made = answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null);
    expect(made).toHaveLength(1);
    expect(new Set(answers.filter((answer) => answer.status === 201).map((answer) => answer.body.data!.customer_id))).toEqual(
      new Set([made[0].body.data!.customer_id]),
    );
  });

  describe('one replica killed (SIGKILL) with calls in flight', () => {
    /** B's customer creations, held at the provider when B dies. */
    const killed: { requestId: string; body: Record<string, unknown> & { reference: string }; sentAt: number }[] = [];
    const others: Answer[] = [];
    let killedAt = 0;

    /** A partner app's traffic on one replica: reads and account openings, until told to stop. */
    async function traffic(replica: number, running: () => boolean): Promise<void> {
      for (let i = 0; running(); i++) {
        const answer =
          i % 2 === 0
            ? await callApi(base(replica), 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner })
            : await callApi(base(replica), 'POST', '/api/v1/bank-accounts', { token: partner, body: buildBankAccountRequest({ customer_id: customerId }) });
        others.push(answer);
      }
    }

    beforeAll(async () => {
      // The provider acts on B's creations at once and holds their answers: they are in flight.
      await injectFault(set.sandbox, { path: 'customer$', method: 'POST', answer_latency_ms: 5000, count: 6 });
      let running = true;
      const load = [a, a, c, c].map((replica) => traffic(replica, () => running));
      await waitFor(() => others.length >= 20, { timeoutMs: 10_000, what: 'traffic on A and C' });

      const inFlight = Array.from({ length: 6 }, () => {
        const call = { requestId: randomUUID(), body: buildCustomerRequest() as Record<string, unknown> & { reference: string }, sentAt: Date.now() };
        killed.push(call);
        return callApi(base(b), 'POST', '/api/v1/customers', { token: partner, body: call.body, requestId: call.requestId }).then(
          () => 'answered',
          () => 'connection lost',
        );
      });
      const ids = new Set(killed.map((call) => call.requestId));
      await waitFor(async () => (await journal(set.sandbox)).filter((entry) => entry.request_id !== null && ids.has(entry.request_id)).length === 6, {
        timeoutMs: 10_000,
        what: 'B’s six calls to reach the provider',
      });
      set.replicas[b].process.child.kill('SIGKILL');
      killedAt = Date.now();
      expect(await set.replicas[b].process.exited).toBeNull();
      expect(await Promise.all(inFlight)).toEqual(Array(6).fill('connection lost'));

      const before = others.length;
      await waitFor(() => others.length >= before + 20, { timeoutMs: 10_000, what: 'traffic on A and C after the kill' });
      running = false;
      await Promise.all(load);
    }, 60_000);

    it('then every call on the other two succeeded', () => {
      expect(others.length).toBeGreaterThanOrEqual(40);
      expect(others.filter((answer) => answer.status !== 200 && answer.status !== 201).map((answer) => [answer.status, answer.body.error])).toEqual([]);
    });

    it('then npm run audit:reconcile lists exactly the killed calls, newest first, with no outcome', async () => {
      const out: string[] = [];
      const code = await runAuditReconcile(['--older-than', '0s'], set.cliEnv, { out: (line) => out.push(line), err: () => undefined });

      expect(code).toBe(0);
      const lines = out.map((line) => JSON.parse(line) as Record<string, string>);
      expect(lines.map((line) => line.request_id).sort()).toEqual(killed.map((call) => call.requestId).sort());
      expect(lines.map((line) => line.reference).sort()).toEqual(killed.map((call) => call.body.reference).sort());
      expect(lines.every((line) => line.operation === 'customer.create' && line.state === 'no_outcome' && line.customer_id === null)).toBe(true);
      const times = lines.map((line) => line.attempted_at);
      expect(times).toEqual([...times].sort().reverse());
    });

    it('then a killed call’s reference is held for the claim’s lease and no longer (in flight while it could still be worked on, its outcome pending after), and its retry is then told the outcome is unknown', async () => {
      const call = killed[0];
      const retry = () => callApi(base(a), 'POST', '/api/v1/customers', { token: partner, body: call.body });
      const heldUntil = call.sentAt + LEASE_MS;
      const codeOf = (answer: Answer) => answer.body.error?.code;
      const holding = (answer: Answer) => codeOf(answer) === 'IDEMPOTENCY.IN_FLIGHT' || codeOf(answer) === 'IDEMPOTENCY.OUTCOME_PENDING';

      const polls: { at: number; answer: Answer }[] = [];
      for (;;) {
        const answer = await retry();
        polls.push({ at: Date.now(), answer });
        if (!holding(answer)) break;
        if (Date.now() > killedAt + LEASE_MS + 5_000) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }

      const held = polls.slice(0, -1);
      const released = polls[polls.length - 1];
      // While the dead replica's claim lasts: in flight (409, Retry-After: 1) while a request could still be at
      // work on it, then its outcome pending (503, Retry-After: 1) until the lease ends...
      expect(held.length).toBeGreaterThan(0);
      for (const { at, answer } of held) {
        const inFlight = at < call.sentAt + WORK_MS - 500;
        const pending = at > call.sentAt + WORK_MS + 1_500;
        if (inFlight) expect([answer.status, codeOf(answer), answer.headers.get('retry-after')]).toEqual([409, 'IDEMPOTENCY.IN_FLIGHT', '1']);
        if (pending) expect([answer.status, codeOf(answer), answer.headers.get('retry-after')]).toEqual([503, 'IDEMPOTENCY.OUTCOME_PENDING', '1']);
      }
      expect(held.some(({ answer }) => codeOf(answer) === 'IDEMPOTENCY.OUTCOME_PENDING')).toBe(true);
      expect(held[held.length - 1].at).toBeGreaterThan(heldUntil - 2_000);
      // ...and taken over once it lapses: the provider has the reference, so the outcome is unknown.
      expect(released.at).toBeLessThan(heldUntil + 2_000);
      expect(released.answer.status).toBe(409);
      expect(released.answer.headers.get('retry-after')).toBeNull();
      expect(released.answer.body.error!.message).toBe('An earlier request with this reference reached the provider, and its outcome is not known');
      expect((await journal(set.sandbox)).filter((entry) => entry.reference === call.body.reference).map((entry) => entry.status)).toEqual([201, 409]);
    }, 30_000);
  });
});
