import { callApi, createCustomer } from '../support/http';
import { ReplicaSet, startReplicas } from '../support/replicas';

// Runs where a Redis answers: .ci/run sets TEST_REDIS_URL when 127.0.0.1:6379 does (jest.config.js
// leaves this file out otherwise).
const REDIS_URL = process.env.TEST_REDIS_URL!;
const LIMIT = 30;

describe('three replicas sharing one Redis: one rate limit per client, wherever its calls land', () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    set = await startReplicas(3, { RATE_LIMIT_REDIS_URL: REDIS_URL, RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  }, 120_000);
  afterAll(async () => {
    await set?.close();
  });

  it('when a client’s calls are spread over the three, then the limit holds for their sum, and another client is not touched', async () => {
    const busy = await set.createClient('partner', 'acme');
    const quiet = await set.createClient('partner', 'acme');
    const customerId = await createCustomer(set.replicas[0].base, quiet);

    const answers = [];
    for (let i = 0; i < LIMIT + 15; i++) {
      answers.push({ replica: i % 3, answer: await callApi(set.replicas[i % 3].base, 'GET', `/api/v1/customers/${customerId}/balance`, { token: busy }) });
    }
    const other = await callApi(set.replicas[1].base, 'GET', `/api/v1/customers/${customerId}/balance`, { token: quiet });

    // Both clients are acme's, so both may read acme's customer.
    const statuses = answers.map(({ answer }) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.slice(LIMIT)).toEqual(Array(15).fill(429));
    expect(new Set(answers.filter(({ answer }) => answer.status === 429).map(({ replica }) => replica))).toEqual(new Set([0, 1, 2]));
    expect(answers.filter(({ answer }) => answer.status === 429).every(({ answer }) => Number(answer.headers.get('retry-after')) > 0)).toBe(true);
    expect(other.status).toBe(200);
  });
});
