import { Drain } from '../../src/common/runtime/drain';
import { EDGE_STAGE_ORDER } from '../../src/edge.pipeline';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { rawExchange } from '../support/raw-http';
import { waitFor } from '../support/wait-for';

const RATE_LIMIT_HEADER = 'x-ratelimit-limit';

/** The order of the edge's stages, shown by what each answer carries. */
describe('The edge: one ordered pipeline', () => {
  let sut: TestApp;
  let partner: string;

  beforeAll(async () => {
    sut = await startTestApp();
    partner = await sut.createClient('partner');
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when listed, then the stages are in the documented order', () => {
    expect(EDGE_STAGE_ORDER).toEqual([
      'request-context',
      'trace',
      'security-headers',
      'target',
      'request-log',
      'drain',
      'identify',
      'admin-paths',
      'rate-limit',
      'metrics',
    ]);
  });

  it('when the target is refused, then the answer carries the request id and the security headers (earlier stages) but no rate-limit count (a later one)', async () => {
    const answer = await rawExchange(sut.baseUrl, `GET /api/v1/customers/../balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner}\r\n\r\n`);

    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toMatch(/\S/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers[RATE_LIMIT_HEADER]).toBeUndefined();
    // The request log (a later stage) still writes the refused request's line once its answer has gone.
    const logged = await waitFor(() =>
      sut.logs.lines.find((line) => (line.req as { id?: string } | undefined)?.id === answer.headers['x-request-id'] && line.res !== undefined),
    );
    expect(logged?.res).toEqual({ statusCode: 400 });
  });

  it('when the token is wrong, then the request was counted by the rate limit before authentication refused it', async () => {
    const answer = await callApi(sut.baseUrl, 'GET', '/api/v1/customers/00000000-0000-4000-8000-000000000000/balance', { token: 'pgw_not-a-token' });

    expect(answer.status).toBe(401);
    expect(answer.headers.get(RATE_LIMIT_HEADER)).not.toBeNull();
  });

  describe('while draining', () => {
    let draining: TestApp;

    beforeAll(async () => {
      draining = await startTestApp();
      draining.app.get(Drain).begin();
    });

    afterAll(async () => {
      await draining.close();
    });

    it('when the target is refused, then the refusal is the target stage’s (it runs before the drain)', async () => {
      const answer = await rawExchange(draining.baseUrl, 'GET /api/v1/customers/../balance HTTP/1.1\r\nHost: x\r\n\r\n');

      expect(answer.status).toBe(400);
    });

    it('when an API request arrives, then it is refused by the drain before the rate limit counts it', async () => {
      const answer = await callApi(draining.baseUrl, 'GET', '/api/v1/customers/00000000-0000-4000-8000-000000000000/balance', { token: partner });

      expect(answer.status).toBe(503);
      expect(answer.headers.get(RATE_LIMIT_HEADER)).toBeNull();
      expect(answer.headers.get('connection')).toBe('close');
    });
  });
});
