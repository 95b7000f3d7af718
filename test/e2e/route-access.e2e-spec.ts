import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { callApi } from '../support/http';

interface Operation {
  readonly security?: readonly Record<string, string[]>[];
}
type Document = { paths: Record<string, Record<string, Operation>> };

/**
 * Each route's access is the global guard (auth/http/access.guard.ts) and its answer the global
 * interceptor (common/http/answer.interceptor.ts): a route either misses would be open or
 * unanswered. Every operation of the served document is called here without credentials and with
 * a caller its decorators refuse, and each must refuse, in the envelope.
 */
describe('every route has its access checked and its answer wrapped', () => {
  let t: TestApp;
  let admin: string;
  let partner: string;
  let operations: { method: 'GET' | 'POST'; path: string; secured: boolean }[];

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.createClient('admin');
    partner = await t.createClient('partner');
    const served = (await (await fetch(`${t.baseUrl}/docs-json`, { headers: { authorization: `Bearer ${admin}` } })).json()) as Document;
    operations = Object.entries(served.paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, operation]) => ({
        method: method.toUpperCase() as 'GET' | 'POST',
        path: path.replace(/\{[^}]+\}/g, randomUUID()),
        secured: (operation.security ?? []).length > 0,
      })),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('when any operation that names a security scheme is called with no credentials, then 401 AUTH.TOKEN_MISSING in the envelope, with an error id', async () => {
    const secured = operations.filter((operation) => operation.secured);
    const answers = await Promise.all(secured.map(async (operation) => ({ operation, answer: await callApi(t.baseUrl, operation.method, operation.path) })));

    expect(secured.length).toBeGreaterThanOrEqual(12);
    expect(answers.filter(({ answer }) => answer.status !== 401 || answer.body.error?.code !== 'AUTH.TOKEN_MISSING').map(({ operation }) => operation)).toEqual(
      [],
    );
    expect(answers.every(({ answer }) => typeof answer.body.error?.id === 'string' && answer.body.data === null)).toBe(true);
  });

  it('when a role the route does not allow calls it (a partner on an admin route, an admin on a partner route), then 403 AUTH.FORBIDDEN, never served', async () => {
    // @Roles on the controllers (read with their handlers' at start): the admin's and the partner's features.
    const ADMIN = /^\/api\/v1\/(clients|end-user-sessions|audit-events|audit-checkpoints|audit-access-report|unresolved-calls)\b/;
    const PARTNER = /^\/api\/v1\/(customers|bank-accounts)\b/;
    const refusedTo = operations.flatMap((operation) => [
      ...(ADMIN.test(operation.path) ? [{ operation, token: partner }] : []),
      ...(PARTNER.test(operation.path) ? [{ operation, token: admin }] : []),
    ]);
    const answers = await Promise.all(
      refusedTo.map(async ({ operation, token }) => ({ operation, answer: await callApi(t.baseUrl, operation.method, operation.path, { token }) })),
    );

    expect(refusedTo.length).toBeGreaterThanOrEqual(10);
    expect(
      answers
        .filter(({ answer }) => answer.status !== 403 || answer.body.error?.code !== 'AUTH.FORBIDDEN')
        .map(({ operation, answer }) => ({ ...operation, status: answer.status })),
    ).toEqual([]);
  });

  it('when any operation under /api/v1 is called, then its audit event names the route’s own operation (every route declares @Audited), never route.unknown', async () => {
    const api = operations.filter((operation) => operation.path.startsWith('/api/v1/'));
    const seen = [];
    for (const operation of api) {
      const requestId = randomUUID();
      await callApi(t.baseUrl, operation.method, operation.path, { token: partner, requestId });
      seen.push({ ...operation, operations: (await auditEventsOf(t.dataSource, requestId)).map((event) => event.operation) });
    }

    expect(api.length).toBeGreaterThanOrEqual(15);
    expect(seen.filter((one) => one.operations.length === 0 || one.operations.includes('route.unknown'))).toEqual([]);
    expect(seen.flatMap((one) => one.operations)).toEqual(
      expect.arrayContaining(['balance.read', 'customer.create', 'bank_account.create', 'request_log.list']),
    );
  });

  it('when a route answers, then a success is wrapped once and a failure is never wrapped again', async () => {
    const me = await callApi<{ name: string }>(t.baseUrl, 'GET', '/api/v1/me', { token: partner });
    const missing = await callApi(t.baseUrl, 'GET', '/api/v1/me');

    expect(me.body).toEqual({ status: 200, message: 'OK', data: expect.objectContaining({ role: 'partner' }), error: null });
    expect(Object.keys(missing.body).sort()).toEqual(['data', 'error', 'message', 'status']);
    expect(missing.body).toMatchObject({ status: 401, data: null, error: { code: 'AUTH.TOKEN_MISSING' } });
  });
});
