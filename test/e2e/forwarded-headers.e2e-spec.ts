import { randomUUID } from 'node:crypto';
import { auditEventsOf } from '../support/audit';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';

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
});
