import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { startReplicas, ReplicaSet } from '../support/replicas';
import { injectFault, journal } from '../support/sandbox';

/**
 * Two gateway processes open bank accounts for a client that retries as a Stripe client does (the
 * same reference and body, after a short, jittered pause, whatever it was told), while their
 * PostgreSQL goes away for about a second and a half: connections refused, every backend ended.
 * The provider acts at once and answers 300 ms later, so that at the moment of the outage there
 * are accounts it has opened whose answers the gateways have yet to record.
 */
const WORKERS = 8;
const OUTAGE_MS = 1500;
/** How long a worker retries one reference before the test gives up on it (it never should). */
const GIVE_UP_MS = 30_000;

interface Told {
  readonly at: number;
  readonly replica: number;
  readonly status: number;
  readonly code?: string;
  readonly accountId?: string;
}

describe('two replicas, PostgreSQL away for a second and a half while accounts are opened', () => {
  let set: ReplicaSet;
  let partner: string;
  let customerId: string;

  beforeAll(async () => {
    set = await startReplicas(2, { UPSTREAM_BREAKER_THRESHOLD: '1000', RATE_LIMIT_PER_MINUTE: '100000' });
    partner = await set.createClient('partner');
    customerId = await createCustomer(set.replicas[0].base, partner);
  }, 120_000);
  afterAll(async () => {
    await set?.close();
  });

  it('when a client retries every answer but a 201, then every account the provider opened ends in a 201 for it, and no retry is told IN_FLIGHT', async () => {
    await injectFault(set.sandbox, { path: 'account', method: 'POST', answer_latency_ms: 300, count: 100_000 });
    /** What the client was told, by reference, in order. */
    const told = new Map<string, Told[]>();
    let opening = true;

    /** One account: sent to either replica, and retried with the same body until it is a 201. */
    const openOne = async (worker: number) => {
      const body = buildBankAccountRequest({ customer_id: customerId });
      const reference = body.reference as string;
      const answers: Told[] = [];
      told.set(reference, answers);
      const started = Date.now();
      for (let attempt = 0; Date.now() - started < GIVE_UP_MS; attempt++) {
        const replica = (worker + attempt) % 2;
        const answer = await callApi(set.replicas[replica].base, 'POST', '/api/v1/bank-accounts', { token: partner, body }).catch(() => undefined);
        answers.push({
          at: Date.now(),
          replica,
          status: answer?.status ?? 0,
          code: answer?.body.error?.code,
          accountId: answer?.status === 201 ? (answer.body.data!.id as string) : undefined,
        });
        if (answer?.status === 201) return;
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
      }
    };
    const worker = async (index: number) => {
      while (opening) await openOne(index);
    };

    const workers = Array.from({ length: WORKERS }, (_, index) => worker(index));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const outageAt = Date.now();
    await set.database.goDown();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await set.database.comeBack();
    const backAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    opening = false;
    await Promise.all(workers);

    const opened = (await journal(set.sandbox)).filter((entry) => entry.method === 'POST' && entry.path.endsWith('/account') && entry.status === 201);
    const all = [...told.values()].flat();
    const summary = {
      accounts: told.size,
      openedByProvider: opened.length,
      answers: all.length,
      byCode: all.reduce<Record<string, number>>((counts, answer) => {
        const key = `${answer.status} ${answer.code ?? ''}`.trim();
        counts[key] = (counts[key] ?? 0) + 1;
        return counts;
      }, {}),
      outageMs: backAt - outageAt,
    };

    // Every account the provider opened was answered 201 to the client that asked, with that account.
    const unanswered = opened.filter((entry) => told.get(entry.reference!)?.at(-1)?.status !== 201);
    expect({ unanswered: unanswered.map((entry) => entry.reference), summary }).toEqual({ unanswered: [], summary });
    for (const entry of opened) {
      const ids = new Set(told.get(entry.reference!)!.flatMap((answer) => (answer.accountId ? [answer.accountId] : [])));
      expect(ids.size).toBe(1);
    }
    // The provider opened each reference once, and every reference ended in a 201.
    expect(new Set(opened.map((entry) => entry.reference)).size).toBe(opened.length);
    expect([...told.values()].filter((answers) => answers.at(-1)?.status !== 201)).toEqual([]);
    // The client retries only after an answer: an IN_FLIGHT would be about an attempt already answered.
    expect(all.filter((answer) => answer.code === 'IDEMPOTENCY.IN_FLIGHT')).toEqual([]);
    expect(all.filter((answer) => answer.code === 'IDEMPOTENCY.OUTCOME_UNKNOWN' || answer.status === 500 || answer.status === 0)).toEqual([]);
    // The outage did catch answers the provider had given: what this test is about happened.
    expect(summary.byCode['503 IDEMPOTENCY.OUTCOME_PENDING'] ?? 0).toBeGreaterThan(0);
  }, 120_000);
});
