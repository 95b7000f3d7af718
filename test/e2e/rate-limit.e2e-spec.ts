import { auditEventsOf } from '../support/audit';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';

describe('Rate limits (per client token, per IP without one)', () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_IP_PER_MINUTE: '3' });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when a client makes more requests in a minute than RATE_LIMIT_PER_MINUTE, then the next is a 429 envelope with Retry-After, audited, and other clients are unaffected', async () => {
    const busy = await sut.createClient('partner');
    const other = await sut.createClient('partner');

    const allowed = [];
    for (let i = 0; i < 5; i++) allowed.push(await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: busy }));
    const refused = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: busy, requestId: `rl-${Date.now()}` });
    const unaffected = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: other });

    expect(allowed.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(allowed.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    // The IETF draft's fields (draft-ietf-httpapi-ratelimit-headers): the policy, and what is left of it.
    expect(allowed.map((a) => a.headers.get('ratelimit-policy'))).toEqual(Array(5).fill('"per-client";q=5;w=60'));
    expect(allowed.map((a) => /^"per-client";r=(\d+);t=(\d+)$/.exec(a.headers.get('ratelimit') ?? '')?.[1])).toEqual(['4', '3', '2', '1', '0']);
    expect(allowed.every((a) => Number(/;t=(\d+)$/.exec(a.headers.get('ratelimit')!)![1]) <= 60)).toBe(true);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ status: 429, data: null, error: { id: expect.any(String), message: expect.stringContaining('Too many requests') } });
    expect(refused.body.error!.details).toContain('5 requests per minute per caller');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(unaffected.status).toBe(200);
    expect(refused.headers.get('ratelimit-policy')).toBe('"per-client";q=5;w=60');
    expect(refused.headers.get('ratelimit')).toBe(`"per-client";r=0;t=${retryAfter}`);

    const events = await auditEventsOf(sut.dataSource, refused.headers.get('x-request-id')!);
    expect(events).toEqual([
      expect.objectContaining({ http_status: 429, error_id: refused.body.error!.id, error_code: 'RATE_LIMIT.EXCEEDED', client_id: expect.any(String) }),
    ]);
  });

  it('when a client calls routes that do not exist, then they count against the same limit as any other call, and the one over it is a 429', async () => {
    const scanner = await sut.createClient('partner');

    const unknown = [];
    for (let i = 0; i < 3; i++) unknown.push(await callApi(sut.baseUrl, 'GET', `/api/v1/admin-${i}`, { token: scanner }));
    const known = [];
    for (let i = 0; i < 2; i++) known.push(await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: scanner }));
    const refused = await callApi(sut.baseUrl, 'GET', '/api/v1/admin-9', { token: scanner });
    const refusedKnown = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: scanner });

    expect(unknown.map((a) => a.status)).toEqual([404, 404, 404]);
    expect(known.map((a) => a.status)).toEqual([200, 200]);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refusedKnown.status).toBe(429);
    const [event] = await auditEventsOf(sut.dataSource, refused.headers.get('x-request-id')!);
    expect(event).toMatchObject({ operation: 'route.unknown', http_status: 429, error_code: 'RATE_LIMIT.EXCEEDED' });
  });

  it('when one address sends requests without a valid token, then after RATE_LIMIT_PER_IP_PER_MINUTE it gets 429 instead of 401 (token guessing is limited)', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token: `guess-${i}-${'x'.repeat(40)}` })).status);
    }
    const refused = await callApi(sut.baseUrl, 'GET', '/api/v1/me');

    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"per-ip";q=3;w=60');
    expect(refused.headers.get('ratelimit')).toMatch(/^"per-ip";r=0;t=\d+$/);
    expect(refused.body.error!.details).toContain('3 requests per minute per source IP');
  });

  it('when the address is over its limit, then a valid client token from it is still served (clients count on their own)', async () => {
    const token = await sut.createClient('partner');
    const anonymous = await callApi(sut.baseUrl, 'GET', '/api/v1/me');

    const answer = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token });

    expect(anonymous.status).toBe(429); // the address is over its limit (the test before spent it)
    expect(answer.status).toBe(200);
  });

  it('when health checks come often, then they are never limited', async () => {
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await fetch(`${sut.baseUrl}/health/live`)).status);

    expect(statuses).toEqual(Array(10).fill(200));
  });
});

describe('Rate limits with a counter store that does not answer', () => {
  let sut: TestApp;

  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    sut = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1' });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when Redis is unreachable, then requests are served (not limited, not failed) and the outage is logged', async () => {
    const token = await sut.createClient('partner');

    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await callApi(sut.baseUrl, 'GET', '/api/v1/me', { token })).status);

    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(sut.logs.text).toContain('Rate-limit store unavailable');
  });
});
