import { ApiClientsService } from '../../src/auth/domain/api-clients.service';
import { PostgresNotifications } from '../../src/database/postgres-notifications';
import { startTestApp, TestApp } from '../support/app';
import { waitFor } from '../support/wait-for';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function call(t: TestApp, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.baseUrl}${path}`, { headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

/** The provider's 401 envelope, field by field: nothing more, nothing less. */
/** The provider's 401 envelope, with the code added: what is wrong, without telling a wrong token from a revoked one. */
function expectProviderUnauthorizedEnvelope(
  body: Record<string, any>,
  expected: { code: string; details?: string } = { code: 'AUTH.INVALID_TOKEN', details: 'The token is invalid or expired' },
): void {
  expect(Object.keys(body).sort()).toEqual(['data', 'error', 'message', 'status']);
  expect(body.status).toBe(401);
  expect(body.data).toBeNull();
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'doc_url', 'id', 'message']);
  expect(body.error.id).toMatch(UUID);
  expect(body.error.code).toBe(expected.code);
  expect(body.error.doc_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/reference/errors#${expected.code.toLowerCase().replace(/[._]/g, '-')}$`));
  if (expected.details !== undefined) expect(body.error.details).toBe(expected.details);
  expect(body.error.message).toBe(
    expected.code === 'AUTH.INVALID_TOKEN' ? 'The supplied token is invalid or expired' : 'The request carries no token this service can read',
  );
}

describe('client authentication on /api/v1', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the token is valid, then the call succeeds in the success envelope', async () => {
    const token = await t.createClient('partner', { name: 'ios-app', tenant: 'acme' });

    const response = await call(t, '/api/v1/me', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 200,
      message: 'OK',
      data: { id: expect.stringMatching(UUID), name: 'ios-app', role: 'partner', tenant: 'acme' },
      error: null,
    });
  });

  it('when the Authorization header is missing, then 401 with the provider envelope and a Bearer challenge (RFC 6750)', async () => {
    const response = await call(t, '/api/v1/me');

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway"');
    expectProviderUnauthorizedEnvelope(response.body, { code: 'AUTH.TOKEN_MISSING', details: 'Send the token as `Authorization: Bearer <token>`' });
  });

  it('when a partner token calls an admin endpoint, then 403 with the code AUTH.FORBIDDEN, and no challenge', async () => {
    const token = await t.createClient('partner');

    const response = await call(t, '/api/v1/clients', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('AUTH.FORBIDDEN');
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it.each([
    ['an unknown token', 'Bearer pgw_unknownunknownunknownunknownunknownunknown', 'Bearer realm="partner-gateway", error="invalid_token"'],
    ['an over-long token', `Bearer ${'x'.repeat(5000)}`, 'Bearer realm="partner-gateway", error="invalid_token"'],
    [
      'a client token under the DPoP scheme',
      'DPoP pgw_unknownunknownunknownunknownunknownunknown',
      expect.stringMatching(/^DPoP realm="partner-gateway", error="invalid_token", algs="/),
    ],
  ])('when the header carries %s, then 401 AUTH.INVALID_TOKEN with the provider envelope and the RFC 6750 challenge', async (_, header, challenge) => {
    const response = await call(t, '/api/v1/me', { authorization: header });

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toEqual(challenge);
    expectProviderUnauthorizedEnvelope(response.body);
  });

  it.each([
    // No token was presented: the challenge names no error (RFC 6750 section 3.1); `details` names the part that is wrong.
    ['Basic (for /docs only)', 'Basic dXNlcjpwYXNz', 'Basic authentication is for /docs only: send the token as `Authorization: Bearer <token>`'],
    ['the scheme alone', 'Bearer', 'The Authorization header must be `Bearer <token>` or `DPoP <token>`'],
    ['another scheme', 'Token abc', 'The Authorization header must be `Bearer <token>` or `DPoP <token>`'],
  ])('when the header carries %s, then 401 AUTH.TOKEN_MISSING says what is wrong, with a challenge naming no error', async (_, header, details) => {
    const response = await call(t, '/api/v1/me', { authorization: header });

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway"');
    expectProviderUnauthorizedEnvelope(response.body, { code: 'AUTH.TOKEN_MISSING', details });
  });

  it('when the token has expired, then 401 with the provider envelope', async () => {
    const token = await t.createClient('partner', { name: 'expiring', expiresAt: new Date(Date.now() + 60_000) });
    expect((await call(t, '/api/v1/me', { authorization: `Bearer ${token}` })).status).toBe(200);
    await t.asOwner(`UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE name = 'expiring'`);
    await waitFor(() => t.app.get(ApiClientsService).rememberedCount === 0, { timeoutMs: 5000, what: 'the change to be announced' });

    const response = await call(t, '/api/v1/me', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(401);
    expectProviderUnauthorizedEnvelope(response.body);
  });

  it('when the token has been revoked, then 401 with the provider envelope as soon as the change is announced', async () => {
    const token = await t.createClient('partner', { name: 'to-revoke' });
    expect((await call(t, '/api/v1/me', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect(t.app.get(ApiClientsService).rememberedCount).toBeGreaterThan(0);
    await t.asOwner(`UPDATE api_clients SET revoked_at = now() WHERE name = 'to-revoke'`);

    // The commit's NOTIFY reaches the instance within milliseconds; it then forgets every client.
    await waitFor(() => t.app.get(ApiClientsService).rememberedCount === 0, { timeoutMs: 5000, what: 'the revocation to be announced' });
    const response = await call(t, '/api/v1/me', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(401);
    expectProviderUnauthorizedEnvelope(response.body);
  });

  it('when a client is remembered, then a request does not read it again; while the change channel is down, nothing is remembered', async () => {
    const revokeSilently = (name: string) =>
      // Without the trigger's NOTIFY (the replication role, the owner's to set, skips triggers): only memory could still say yes.
      t.asOwner(`BEGIN; SET LOCAL session_replication_role = replica; UPDATE api_clients SET revoked_at = now() WHERE name = '${name}'; COMMIT`);
    const status = async (token: string) => (await call(t, '/api/v1/me', { authorization: `Bearer ${token}` })).status;
    const notifications = t.app.get(PostgresNotifications);
    // createClient waits for the creation's own announcement, which would make the instance forget.
    const remembered = await t.createClient('partner', { name: 'remembered' });
    expect(await status(remembered)).toBe(200);
    await revokeSilently('remembered');
    const fromMemory = await status(remembered);

    await t.dataSource.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'partner-gateway:listen' AND datname = current_database()`,
    );
    await waitFor(() => !notifications.live, { timeoutMs: 5000, what: 'the instance to notice the channel is down' });
    const forgotten = await status(remembered);
    const unremembered = await t.createClient('partner', { name: 'while-down' });
    const firstWhileDown = await status(unremembered);
    await revokeSilently('while-down');
    const secondWhileDown = await status(unremembered);
    await waitFor(() => notifications.live, { timeoutMs: 5000, what: 'the instance to listen again' });

    expect(fromMemory).toBe(200);
    expect([forgotten, firstWhileDown, secondWhileDown]).toEqual([401, 200, 401]);
    expect(await status(remembered)).toBe(401);
  });

  it('when two failures happen, then each gets its own error id', async () => {
    const first = await call(t, '/api/v1/me');
    const second = await call(t, '/api/v1/me');

    expect(first.body.error.id).not.toBe(second.body.error.id);
  });

  it('when a partner token calls an admin route, then 403 in the envelope', async () => {
    const token = await t.createClient('partner');

    const response = await call(t, '/api/v1/clients', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(403);
    expect(response.body.data).toBeNull();
    expect(response.body.error.id).toMatch(UUID);
    expect(response.body.error.details).toBe('Requires the admin role');
  });

  it('when an admin lists clients, then it sees them without any token or hash', async () => {
    const token = await t.createClient('admin', { name: 'support-desk' });

    const response = await call(t, '/api/v1/clients', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(200);
    expect(response.body.data.map((c: { name: string }) => c.name)).toContain('support-desk');
    const text = JSON.stringify(response.body);
    expect(text).not.toContain(token);
    expect(text).not.toMatch(/token/i);
  });

  it('when the route does not exist, then 404 in the envelope', async () => {
    const token = await t.createClient('partner');

    const response = await call(t, '/api/v1/nothing-here', { authorization: `Bearer ${token}` });

    expect(response.status).toBe(404);
    expect(response.body.error.id).toMatch(UUID);
  });

  it('when tokens were used, then neither the tokens nor the header appear in the logs', async () => {
    const token = await t.createClient('partner', { name: 'log-check' });
    await call(t, '/api/v1/me', { authorization: `Bearer ${token}` });
    await call(t, '/api/v1/clients', { authorization: `Bearer ${token}` });
    await call(t, '/api/v1/me', { authorization: 'Bearer pgw_wrong-token-that-must-not-be-logged' });

    await waitFor(() => t.logs.text.includes('"statusCode":401'));
    expect(t.logs.lines.length).toBeGreaterThan(3);
    expect(t.logs.text).not.toContain(token);
    expect(t.logs.text).not.toContain('pgw_wrong-token-that-must-not-be-logged');
    expect(t.logs.text).not.toMatch(/"authorization"/i);
  });
});

describe('X-Request-Id', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the caller sends a sane id, then the same id comes back and is logged with the request', async () => {
    const response = await call(t, '/health/live', { 'x-request-id': 'app-7f3c.42:retry-1' });
    await call(t, '/api/v1/me', { 'x-request-id': 'req-for-the-log' });

    expect(response.headers.get('x-request-id')).toBe('app-7f3c.42:retry-1');
    const completed = () => t.logs.lines.filter((line) => (line.req as { id?: string } | undefined)?.id === 'req-for-the-log' && line.res);
    await waitFor(() => completed().length > 0);
    expect(completed()).toHaveLength(1);
  });

  it('when the caller sends none, then a UUID is generated and returned', async () => {
    const response = await call(t, '/health/live');

    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it.each([
    ['too long', 'a'.repeat(200)],
    ['with spaces', 'hello world'],
    ['with a quote', 'abc"def'],
    ['starting with a dash', '-abc'],
  ])('when the caller sends an id %s, then it is replaced by a UUID', async (_, given) => {
    const response = await call(t, '/health/live', { 'x-request-id': given });

    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('when the request fails, then the error response carries the id too', async () => {
    const response = await call(t, '/api/v1/me', { 'x-request-id': 'failing-call-1' });

    expect(response.status).toBe(401);
    expect(response.headers.get('x-request-id')).toBe('failing-call-1');
  });
});

describe('health and docs', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Live mode keeps the docs for admins (test/e2e/hardening.e2e-spec.ts); here they are opened.
    t = await startTestApp({ DOCS_PUBLIC: 'true' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the database answers, then /health/ready is 200 and needs no token', async () => {
    const response = await call(t, '/health/ready');

    expect(response.status).toBe(200);
    // The verdict alone: what each check found is an admin's (test/e2e/health.e2e-spec.ts).
    expect(response.body.data).toEqual({ status: 'ok' });
  });

  it('when /docs-json is fetched, then the spec declares the bearer scheme', async () => {
    const response = await call(t, '/docs-json');

    expect(response.status).toBe(200);
    expect(response.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // No OpenID provider is configured here: client tokens only (with one, an end user's access token too).
    expect(response.body.paths['/api/v1/me'].get.security).toEqual([{ bearer: [] }]);
    expect(response.body.components.securitySchemes['end-user']).toBeUndefined();
    expect(response.body.components.securitySchemes['browser-session']).toBeUndefined();
    // The operations that say they need no credential (`security: []`) are the public ones; an operation that only an end
    // user could call (the session's own, which only a provider's login opens) is not served rather than left saying so.
    const open = Object.entries(response.body.paths as Record<string, Record<string, { security?: unknown[] }>>).flatMap(([path, byMethod]) =>
      Object.entries(byMethod)
        .filter(([, operation]) => operation.security?.length === 0)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(open.sort()).toEqual([
      'GET /.well-known/audit-keys.json',
      'GET /api/v1/session/callback',
      'GET /api/v1/session/login',
      'GET /api/v1/webhooks/jwks',
      'GET /health/live',
      'GET /health/ready',
      'POST /api/v1/session/backchannel-logout',
      'POST /api/v1/session/logout',
    ]);
    expect(response.body.paths['/api/v1/session']).toBeUndefined();
  });

  it('when /docs is fetched, then Swagger UI is served', async () => {
    const response = await fetch(`${t.baseUrl}/docs`);

    expect(response.status).toBe(200);
    expect(await response.text()).toContain('swagger-ui');
  });
});
