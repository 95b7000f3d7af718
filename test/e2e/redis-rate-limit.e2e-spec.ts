import { randomUUID } from 'node:crypto';
import { RedisRateLimitRepository } from '../../src/rate-limit/redis-rate-limit.repository';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';

// Runs where a Redis answers: .ci/run sets TEST_REDIS_URL when 127.0.0.1:6379 does (jest.config.js
// leaves this file out otherwise).
const REDIS_URL = process.env.TEST_REDIS_URL!;

describe('RedisRateLimitRepository (a real Redis)', () => {
  let sut: RedisRateLimitRepository;

  beforeAll(async () => {
    sut = await RedisRateLimitRepository.connect(REDIS_URL, `partner-gateway-test:${randomUUID()}:`);
  });

  afterAll(() => {
    sut.onModuleDestroy();
  });

  it('when a key is hit up to its limit, then the hits count up; one more and it is blocked for the block duration', async () => {
    const key = randomUUID();

    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await sut.increment(key, 60_000, 3, 30_000));
    const over = await sut.increment(key, 60_000, 3, 30_000);
    const still = await sut.increment(key, 60_000, 3, 30_000);

    expect(hits.map((h) => [h.totalHits, h.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(hits[0].timeToExpire).toBe(60);
    expect(over).toMatchObject({ totalHits: 4, isBlocked: true, timeToBlockExpire: 30 });
    expect(still.isBlocked).toBe(true);
  });

  it('when the window passes, then the key starts again from one hit', async () => {
    const key = randomUUID();
    await sut.increment(key, 300, 1, 300);
    await sut.increment(key, 300, 1, 300);

    await new Promise((resolve) => setTimeout(resolve, 700));
    const after = await sut.increment(key, 300, 1, 300);

    expect(after).toMatchObject({ totalHits: 1, isBlocked: false });
  });
});

describe('Two replicas sharing one Redis for their rate limits', () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_REDIS_URL: REDIS_URL };
    first = await startTestApp(env);
    second = await startTestApp(env, { database: first.database });
  });

  afterAll(async () => {
    await second.app.close();
    await second.sandbox.close();
    await first.close();
  });

  it('when a client spreads its requests over both replicas, then they count against one limit', async () => {
    const token = await first.createClient('partner');

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await callApi(first.baseUrl, 'GET', '/api/v1/me', { token })).status);
    for (let i = 0; i < 2; i++) statuses.push((await callApi(second.baseUrl, 'GET', '/api/v1/me', { token })).status);
    const refused = await callApi(second.baseUrl, 'GET', '/api/v1/me', { token });
    const alsoRefused = await callApi(first.baseUrl, 'GET', '/api/v1/me', { token });

    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(refused.status).toBe(429);
    expect(alsoRefused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
