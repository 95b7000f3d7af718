import { randomBytes } from 'node:crypto';
import { Authenticator } from '../../src/auth/domain/authenticator';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { webLogin } from '../../dev/identity-provider/dev-login';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';
import { webClientEnv } from '../support/sessions';

/**
 * What a review of web apps' browser sessions found, each over HTTP as an attacker or an unlucky user
 * would meet it (docs/security.md, "Threat model"). Each test is named after its finding.
 */

/** A call as a web app makes it: the session cookie and the anti-forgery header. */
const withSession = (base: string, method: 'GET' | 'POST', path: string, session: string, options: { body?: unknown; rawBody?: string } = {}) =>
  callApi<Record<string, unknown>>(base, method, path, { ...options, headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } });

describe('browser sessions: the threats a review found', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    env = webClientEnv(idp.issuer);
    t = await startTestApp(env);
    await idp.setWebOrigins([t.baseUrl]);
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('when demo logs in through a web app, then the session names them as their provider does, to them only: never in the audit log or a log line', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const view = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);
    const me = await withSession(t.baseUrl, 'GET', '/api/v1/me', session);
    const events = await t.asOwner(`SELECT * FROM audit_events WHERE request_id = ANY($1)`, [
      [view.headers.get('x-request-id'), me.headers.get('x-request-id')],
    ]);

    const shown = { sub: 'demo', name: 'Demo User', preferred_username: 'demo', email: 'demo@example.com' };
    expect(view.body.data!.user).toEqual(shown);
    expect(me.body.data!.user).toEqual(shown);
    expect(events).toHaveLength(2);
    for (const claim of ['Demo User', 'demo@example.com']) {
      expect(JSON.stringify(events)).not.toContain(claim);
      expect(t.logs.text).not.toContain(claim);
    }
  });

  it('when a browser that holds a web app’s session opens /docs, then it is asked for the admin token (the session counts for nothing there)', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const docs = await fetch(`${t.baseUrl}/docs`, { headers: { cookie: `__Host-gw_session=${session}` } });

    expect(docs.status).toBe(401);
    expect(docs.headers.get('www-authenticate')).toMatch(/^Basic /);
  });

  it('finding 12: when a browser that holds a session logs in again, then the session it had ends once the new login completes (its cookie is sent with the start, a same-site navigation; the provider’s redirect to the callback carries no SameSite=Strict cookie)', async () => {
    const first = await webLogin(t.baseUrl, 'demo');

    const second = await webLogin(t.baseUrl, 'demo', '/app/', first.session);

    expect((await withSession(t.baseUrl, 'GET', '/api/v1/session', first.session)).status).toBe(401);
    expect((await withSession(t.baseUrl, 'GET', '/api/v1/session', second.session)).status).toBe(200);
  });

  it('when a logout names a return_to that is refused, then 400 and nothing changes: the session lives and its cookie is kept, for a retry', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const refused = await withSession(t.baseUrl, 'POST', '/api/v1/session/logout', session, { body: { return_to: 'https://evil.example/' } });

    expect(refused.status).toBe(400);
    expect(refused.headers.getSetCookie().filter((line) => line.startsWith('__Host-gw_session='))).toEqual([]);
    expect((await withSession(t.baseUrl, 'GET', '/api/v1/session', session)).status).toBe(200);
  });

  it('when a logout carries the session cookie twice, then both sessions end (which one was meant cannot be told)', async () => {
    const one = await webLogin(t.baseUrl, 'demo');
    const other = await webLogin(t.baseUrl, 'alex');

    const logout = await callApi(t.baseUrl, 'POST', '/api/v1/session/logout', {
      headers: { cookie: `__Host-gw_session=${one.session}; __Host-gw_session=${other.session}`, 'x-csrf': '1' },
    });

    expect(logout.status).toBe(200);
    expect((await withSession(t.baseUrl, 'GET', '/api/v1/session', one.session)).status).toBe(401);
    expect((await withSession(t.baseUrl, 'GET', '/api/v1/session', other.session)).status).toBe(401);
  });

  it('when an admin of another tenant asks for an end user’s sessions, then 400: an admin reaches its own tenant’s end users only', async () => {
    const outsider = await t.createClient('admin', { tenant: 'globex' });

    const listed = await callApi(t.baseUrl, 'GET', '/api/v1/end-user-sessions?end_user=demo', { token: outsider });
    const ended = await callApi(t.baseUrl, 'POST', '/api/v1/end-user-sessions/end', { token: outsider, body: { end_user: 'demo' } });

    expect([listed.status, ended.status]).toEqual([400, 400]);
  });

  it('when a probe or a static page comes with credentials, then none is looked up (only the API and the admin paths identify a caller)', async () => {
    const authenticator = t.app.get(Authenticator);
    const authenticate = authenticator.authenticate.bind(authenticator);
    let asked = 0;
    authenticator.authenticate = (presented) => {
      asked += 1;
      return authenticate(presented);
    };
    try {
      const probes = await Promise.all(
        ['/health/live', '/health/ready'].map((path) =>
          fetch(`${t.baseUrl}${path}`, { headers: { authorization: 'Bearer pgw_guessguessguessguessguessguessguessguess' } }),
        ),
      );
      const api = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: 'pgw_guessguessguessguessguessguessguessguess' });

      expect(probes.map((answer) => answer.status)).toEqual([200, 200]);
      expect(api.status).toBe(401);
      expect(asked).toBe(1);
    } finally {
      authenticator.authenticate = authenticate;
    }
  });

  it('when Basic credentials are sent to /metrics, whose challenge is Bearer, then they count for nothing there (401)', async () => {
    const admin = await t.createClient('admin');

    const metrics = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Basic ${Buffer.from(`x:${admin}`).toString('base64')}` } });
    const bearer = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } });

    expect([metrics.status, bearer.status]).toEqual([401, 200]);
  });

  it('finding 4: when a web app logs out with no body at all, then the session ends (the body is optional)', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const logout = await withSession(t.baseUrl, 'POST', '/api/v1/session/logout', session);
    const after = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);

    expect(logout.status).toBe(200);
    expect(after.status).toBe(401);
  });

  it('finding 12: when a browser logs out, then its refresh token is revoked at the provider (RFC 7009)', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const before = idp.refreshTokensDestroyed();

    const logout = await withSession(t.baseUrl, 'POST', '/api/v1/session/logout', session, { body: {} });

    expect(logout.status).toBe(200);
    expect(idp.refreshTokensDestroyed()).toBe(before + 1);
  });

  it('finding 17: when an answer is to a request with the session cookie, then no shared cache may store it', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const answers = [await withSession(t.baseUrl, 'GET', '/api/v1/session', session), await withSession(t.baseUrl, 'GET', '/api/v1/me', session)];

    expect(answers.map((answer) => [answer.status, answer.headers.get('cache-control')])).toEqual([
      [200, 'no-store'],
      [200, 'no-store'],
    ]);
  });

  it('when an admin logs an end user out everywhere, then every session of theirs ends, both calls are audited under the admin, and nobody else’s session ends', async () => {
    const adminName = `support-${randomBytes(4).toString('hex')}`;
    const admin = await t.createClient('admin', { name: adminName });
    const first = await webLogin(t.baseUrl, 'demo');
    const second = await webLogin(t.baseUrl, 'demo');
    const someoneElse = await webLogin(t.baseUrl, 'alex');

    const listed = await callApi<Record<string, unknown>[]>(t.baseUrl, 'GET', '/api/v1/end-user-sessions?end_user=demo', { token: admin });
    const ended = await callApi(t.baseUrl, 'POST', '/api/v1/end-user-sessions/end', { token: admin, body: { end_user: 'demo' } });
    const after = await Promise.all([first, second, someoneElse].map(({ session }) => withSession(t.baseUrl, 'GET', '/api/v1/session', session)));
    const events = await t.asOwner<{ operation: string; client_name: string }>(
      `SELECT operation, client_name FROM audit_events WHERE request_id = ANY($1) ORDER BY occurred_at`,
      [[listed.headers.get('x-request-id'), ended.headers.get('x-request-id')]],
    );

    expect(listed.status).toBe(200);
    expect(listed.body.data!.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(listed.body.data![0]).sort()).toEqual(['created_at', 'end_user_id', 'expires_at', 'issuer', 'last_seen_at', 'tenant']);
    expect(ended.body.data!.ended).toBeGreaterThanOrEqual(2);
    expect(after.map((answer) => answer.status)).toEqual([401, 401, 200]);
    expect(events).toEqual([
      { operation: 'session.list', client_name: adminName },
      { operation: 'session.end_all', client_name: adminName },
    ]);
  });

  it('finding 5: when a replica seals with another SESSION_KEY, then a session it cannot open ends with 401, never a 500', async () => {
    const other = await startTestApp({ ...env, SESSION_KEY: randomBytes(32).toString('base64') }, { database: t.database });
    try {
      const { session } = await webLogin(t.baseUrl, 'demo');

      const there = await withSession(other.baseUrl, 'GET', '/api/v1/session', session);

      expect(there.status).toBe(401);
      expect(there.body.error?.code).toBe('SESSION.ENDED');
    } finally {
      await other.app.close();
      await other.sandbox.close();
    }
  });
});

describe('the OpenID provider’s back-channel logout and the per-address limit', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    t = await startTestApp(webClientEnv(idp.issuer, { RATE_LIMIT_PER_IP_PER_MINUTE: '5' }));
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('finding 10: when anonymous calls from the provider’s address have used up the per-address limit, then its back-channel logouts are still heard', async () => {
    for (let i = 0; i < 6; i++) await callApi(t.baseUrl, 'GET', '/api/v1/no-such-route');
    const anonymous = await callApi(t.baseUrl, 'GET', '/api/v1/no-such-route');

    const logout = await fetch(`${t.baseUrl}/api/v1/session/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=not-a-token',
    });

    expect(anonymous.status).toBe(429);
    // Heard, and refused for what it is: a token that is not the provider's.
    expect(logout.status).toBe(400);
    expect(logout.headers.get('ratelimit-policy')).toContain('"identity-provider"');
  });
});

describe('browser sessions whose provider is down at logout', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    // Two-second access tokens: once one has expired, using the session means renewing it at the provider.
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE, accessTokenSeconds: 2 });
    t = await startTestApp(webClientEnv(idp.issuer));
    await idp.setWebOrigins([t.baseUrl]);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('finding 3: when the OpenID provider is down, then logout still ends the session and clears the cookie', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await idp.close();

    const logout = await withSession(t.baseUrl, 'POST', '/api/v1/session/logout', session, { body: { return_to: '/app/' } });
    const rows = await t.asOwner('SELECT 1 FROM browser_sessions');

    expect(logout.status).toBe(200);
    expect(logout.headers.getSetCookie().find((line) => line.startsWith('__Host-gw_session='))).toMatch(/Max-Age=0/i);
    expect(rows).toEqual([]);
  });
});
