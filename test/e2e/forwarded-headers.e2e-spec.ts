import { randomBytes, randomUUID } from 'node:crypto';
import { auditEventsOf } from '../support/audit';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { dpopProof, DpopKey, newDpopKey, TEST_AUDIENCE, TestIssuer } from '../support/oidc';

/**
 * TRUST_PROXY over HTTP: which X-Forwarded-For entry a request is audited and rate-limited as. The
 * test's connections come from 127.0.0.1, which plays the proxy in front; whatever stands left of
 * the proxy's own entry in X-Forwarded-For is what the caller wrote.
 */
describe('Forwarded headers (TRUST_PROXY)', () => {
  describe('with one trusted hop (TRUST_PROXY=1)', () => {
    let sut: TestApp;

    beforeAll(async () => {
      sut = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_PER_IP_PER_MINUTE: '2' });
    });
    afterAll(async () => {
      await sut?.close();
    });

    it('finding 2: when a caller writes its own X-Forwarded-For entry before the proxy’s, then the request is audited as the address the proxy saw, not the one the caller wrote', async () => {
      const requestId = randomUUID();

      const answer = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { requestId, headers: { 'x-forwarded-for': '6.6.6.6, 10.0.0.9' } });

      expect(answer.status).toBe(401);
      const events = await auditEventsOf(sut.dataSource, requestId);
      expect(events.map((event) => event.source_ip)).toEqual(['10.0.0.9']);
    });

    it('finding 2: when callers behind one proxied address write a new X-Forwarded-For entry each time, then they still share that address’s rate limit', async () => {
      const answers = [];
      for (const spoofed of ['6.6.6.1', '6.6.6.2', '6.6.6.3']) {
        answers.push(await callApi(sut.baseUrl, 'GET', '/api/v1/me', { requestId: randomUUID(), headers: { 'x-forwarded-for': `${spoofed}, 10.0.0.7` } }));
      }

      expect(answers.map((answer) => answer.status)).toEqual([401, 401, 429]);
      expect(answers[2].headers.get('ratelimit-policy')).toBe('"per-ip";q=2;w=60');
      const [refused] = await auditEventsOf(sut.dataSource, answers[2].headers.get('x-request-id')!);
      expect(refused).toMatchObject({ http_status: 429, error_code: 'RATE_LIMIT.EXCEEDED', source_ip: '10.0.0.7' });
    });
  });

  describe('with the proxies named by range (TRUST_PROXY=<CIDR list>)', () => {
    let sut: TestApp;

    beforeAll(async () => {
      sut = await startTestApp({ TRUST_PROXY: '10.244.0.0/16, 192.0.2.7' });
    });
    afterAll(async () => {
      await sut?.close();
    });

    it('finding 2: when a request comes from an address that is not a named proxy, then its X-Forwarded-For is ignored and the connection’s address is audited', async () => {
      const requestId = randomUUID();

      const answer = await callApi(sut.baseUrl, 'GET', '/api/v1/me', { requestId, headers: { 'x-forwarded-for': '6.6.6.6, 10.244.0.5' } });

      expect(answer.status).toBe(401);
      const events = await auditEventsOf(sut.dataSource, requestId);
      expect(events.map((event) => event.source_ip)).toEqual(['127.0.0.1']);
    });
  });

  describe('with a trusted proxy, end users and DPoP (the proof names the URL the proxy was sent)', () => {
    let sut: TestApp;
    let issuer: TestIssuer;
    let key: DpopKey;
    let token: string;

    /** A DPoP-bound end user's request through the proxy, with a proof for `proofUrl` and the forwarded headers given. */
    const viaProxy = async (method: 'GET' | 'POST', path: string, proofUrl: string, forwarded: Record<string, string>) =>
      callApi(sut.baseUrl, method, path, {
        headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, { method, url: proofUrl, accessToken: token }), ...forwarded },
      });

    beforeAll(async () => {
      issuer = await TestIssuer.start();
      sut = await startTestApp({
        TRUST_PROXY: '1',
        OIDC_ISSUER: issuer.issuer,
        OIDC_AUDIENCE: TEST_AUDIENCE,
        END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      });
      key = await newDpopKey();
      token = await issuer.token({ cnf: { jkt: key.jkt } });
    });
    afterAll(async () => {
      await sut?.close();
      await issuer?.close();
    });

    it('finding: when X-Forwarded-Host carries a path and a query (`<host>/api/v1/me?`), then the request is refused 400, and a proof for GET /api/v1/me never passes on another path', async () => {
      const customerId = randomUUID();

      const answer = await viaProxy('GET', `/api/v1/customers/${customerId}/balance`, 'https://api.partner.example/api/v1/me', {
        'x-forwarded-host': 'api.partner.example/api/v1/me?',
        'x-forwarded-proto': 'https',
      });

      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'REQUEST.MALFORMED', details: expect.stringContaining('X-Forwarded-Host') });
    });

    it.each([
      ['api.partner.example#x'],
      ['user@api.partner.example'],
      ['api.partner.example:99999'],
      ['api partner.example'],
      ['evil.example, api.partner.example/x'],
    ])('when X-Forwarded-Host is %j (not a host[:port]), then the request is refused 400 before anyone is identified', async (host) => {
      const answer = await viaProxy('GET', '/api/v1/me', `https://${host}/api/v1/me`, { 'x-forwarded-host': host, 'x-forwarded-proto': 'https' });

      expect([answer.status, answer.body.error?.code]).toEqual([400, 'REQUEST.MALFORMED']);
    });

    it('when X-Forwarded-Proto is neither http nor https, then the request is refused 400', async () => {
      const answer = await viaProxy('GET', '/api/v1/me', 'javascript://api.partner.example/api/v1/me', {
        'x-forwarded-host': 'api.partner.example',
        'x-forwarded-proto': 'javascript',
      });

      expect([answer.status, answer.body.error?.code]).toEqual([400, 'REQUEST.MALFORMED']);
    });

    it('finding: when the path carries an encoded ? (%3F), then a proof for the path before it is refused (the URL compared is built from the path as encoded, never decoded and parsed again)', async () => {
      const forwarded = { 'x-forwarded-host': 'api.partner.example', 'x-forwarded-proto': 'https' };

      const shortened = await viaProxy('GET', '/api/v1/requests/abc%3Fx', 'https://api.partner.example/api/v1/requests/abc', forwarded);
      const exact = await viaProxy('GET', '/api/v1/requests/abc%3Fx', 'https://api.partner.example/api/v1/requests/abc%3Fx', forwarded);

      expect([shortened.status, shortened.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
      // The proof passes; end users may not read the request log.
      expect([exact.status, exact.body.error?.code]).toEqual([403, 'AUTH.FORBIDDEN']);
    });

    it('when the proxy forwards a plain host and port, then a proof for that origin and the request’s own path passes', async () => {
      const answer = await viaProxy('GET', '/api/v1/me', 'https://api.partner.example:8443/api/v1/me', {
        'x-forwarded-host': 'api.partner.example:8443',
        'x-forwarded-proto': 'https',
      });

      expect(answer.status).toBe(200);
    });
  });
});
