import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClientsService } from '../../src/auth/domain/api-clients.service';
import { startTestApp, TestApp } from '../support/app';

/**
 * What an anonymous caller can make the database do: look a guessed token up. Refused credentials
 * count per source address wherever they are presented; past the budget, the admin paths (which no
 * other limit covers) answer 429 with no lookup. Malformed and repeated tokens are never looked up.
 */
describe('unauthenticated lookups, bounded', () => {
  const BUDGET = 5;
  let t: TestApp;
  let remembered: () => number;

  const guess = () => `pgw_${randomBytes(32).toString('base64url')}`;
  const get = (path: string, token: string) => fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });

  beforeEach(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_IP_PER_MINUTE: String(BUDGET), METRICS_ENABLED: 'true' });
    const clients = t.app.get(ApiClientsService);
    remembered = () => clients.rememberedUnknownCount;
  });
  afterEach(async () => {
    await t.close();
  });

  it('when an address presents more refused tokens than its budget on /metrics, then the rest get 429 with Retry-After and no lookup', async () => {
    const answers: number[] = [];
    for (let i = 0; i < BUDGET; i += 1) answers.push((await get('/metrics', guess())).status);
    const lookedUp = remembered();

    const over = await get('/metrics', guess());
    const body = (await over.json()) as { error: { code: string; id: string } };
    for (let i = 0; i < 20; i += 1) expect((await get('/metrics', guess())).status).toBe(429);

    expect(answers).toEqual(Array(BUDGET).fill(401));
    expect(lookedUp).toBe(BUDGET);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(body.error).toMatchObject({ code: 'RATE_LIMIT.EXCEEDED', id: expect.any(String) });
    // Twenty-one more guesses, none of them looked up.
    expect(remembered()).toBe(BUDGET);
  });

  it('when the budget is spent on the API, then the admin paths refuse that address without a lookup, and a valid client on the API is still served (it counts on its own)', async () => {
    const partner = await t.createClient('partner');
    for (let i = 0; i < BUDGET; i += 1) expect((await get('/api/v1/me', guess())).status).toBe(401);

    const metrics = await get('/metrics', guess());
    const docs = await fetch(`${t.baseUrl}/docs-json`, { headers: { authorization: `Bearer ${guess()}` } });
    const valid = await get('/api/v1/me', partner);

    expect(metrics.status).toBe(429);
    expect(docs.status).toBe(429);
    expect(valid.status).toBe(200);
    expect(remembered()).toBe(BUDGET);
  });

  it('when the same unknown token is sent again and again, then it is looked up once, and its refusals still count', async () => {
    const token = guess();

    const answers: number[] = [];
    for (let i = 0; i < BUDGET + 2; i += 1) answers.push((await get('/metrics', token)).status);

    expect(answers).toEqual([...Array(BUDGET).fill(401), 429, 429]);
    expect(remembered()).toBe(1);
  });

  it('when a token is not of the shape the gateway makes, then it is refused with no lookup', async () => {
    for (const token of ['x', `pgw_${'a'.repeat(42)}`, `pgw_${'a'.repeat(400)}`]) expect((await get('/metrics', token)).status).toBe(401);

    expect(remembered()).toBe(0);
  });
});

describe('the metrics token (METRICS_TOKEN): a credential for /metrics alone', () => {
  let t: TestApp;
  const token = randomBytes(32).toString('base64url');
  const scrape = (authorization?: string) => fetch(`${t.baseUrl}/metrics`, { headers: authorization ? { authorization } : {} });

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-token-'));
    const file = join(dir, 'metrics-token');
    writeFileSync(file, `${token}\n`);
    t = await startTestApp({ METRICS_TOKEN: file, RATE_LIMIT_PER_IP_PER_MINUTE: '5' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('when Prometheus sends the token from its file, then /metrics answers with the series', async () => {
    const answer = await scrape(`Bearer ${token}`);

    expect(answer.status).toBe(200);
    expect(await answer.text()).toMatch(/^# HELP http_request_duration_seconds/m);
  });

  it('when an admin client’s token is sent, then /metrics refuses it: the token is the only credential there, and the admin token reads nothing else from it', async () => {
    const admin = await t.createClient('admin');

    const answer = await scrape(`Bearer ${admin}`);
    const body = (await answer.json()) as { error: { code: string } };

    expect(answer.status).toBe(401);
    expect(body.error.code).toBe('AUTH.INVALID_TOKEN');
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="Partner gateway metrics", error="invalid_token"');
  });

  it('when no token or another scheme is sent, then 401 AUTH.TOKEN_MISSING with the Bearer challenge', async () => {
    for (const authorization of [undefined, `Basic ${Buffer.from(`x:${token}`).toString('base64')}`, `DPoP ${token}`]) {
      const answer = await scrape(authorization);

      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('AUTH.TOKEN_MISSING');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="Partner gateway metrics"');
    }
  });

  it('when wrong tokens are sent, then each is refused without a lookup, and the address keeps its budget for the API', async () => {
    const clients = t.app.get(ApiClientsService);
    const before = clients.rememberedUnknownCount;

    const answers: number[] = [];
    for (let i = 0; i < 20; i += 1) answers.push((await scrape(`Bearer wrong${i}${token}`)).status);
    const lookedUp = clients.rememberedUnknownCount - before;
    const api = await fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer pgw_${randomBytes(32).toString('base64url')}` } });

    expect(answers).toEqual(Array(20).fill(401));
    expect(lookedUp).toBe(0);
    expect(api.status).toBe(401);
  });
});
