import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { hashOf } from '../../src/auth/domain/browser-sessions.service';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { setCookieValue, webLogin, webLoginUntilCallback } from '../../dev/identity-provider/dev-login';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';
import { clearSandbox, journal } from '../support/sandbox';
import { rawExchange } from '../support/raw-http';
import { JWT_LIKE, webClientEnv } from '../support/sessions';
import { waitFor } from '../support/wait-for';

/**
 * The browser session of a web app (docs/security.md, "Web apps"), over real HTTP: the development
 * OpenID provider (PAR, the code flow, back-channel logout), two replicas on one database, and the
 * attacks the session must stand: a forged cross-site request, an open redirect, a replayed or
 * transplanted callback, session fixation, a cookie replayed after logout.
 */
describe('browser sessions of web apps', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let replica: TestApp;
  let partner: string;

  /** A call as the web app makes it: the session cookie, and the anti-forgery header unless told otherwise. */
  const withSession = (
    base: string,
    method: 'GET' | 'POST',
    path: string,
    session: string,
    options: { csrf?: boolean; origin?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) =>
    callApi<Record<string, unknown>>(base, method, path, {
      body: options.body,
      headers: {
        cookie: `__Host-gw_session=${session}`,
        ...(options.csrf === false ? {} : { 'x-csrf': '1' }),
        ...(options.origin ? { origin: options.origin } : {}),
        ...options.headers,
      },
    });

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    const shared = webClientEnv(idp.issuer, { CORS_ORIGINS: 'https://app.partner.example' });
    t = await startTestApp(shared);
    replica = await startTestApp(shared, { database: t.database });
    // The provider's client for this gateway: its callback, and its back-channel logout to the first replica.
    await idp.setWebOrigins([t.baseUrl]);
    partner = await t.createClient('partner');
  });

  afterAll(async () => {
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
    await idp?.close();
  });

  beforeEach(() => clearSandbox(t.sandbox));

  it('when demo logs in, then the browser gets an HttpOnly __Host- cookie and is sent back, and the session names them without a token', async () => {
    const start = await fetch(`${t.baseUrl}/api/v1/session/login?return_to=%2Fapp%2F`, { redirect: 'manual' });
    const { session, location } = await webLogin(t.baseUrl, 'demo');
    const me = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);
    const callback = await webLoginUntilCallback(t.baseUrl, 'demo');
    const answer = await fetch(callback.callbackUrl, { redirect: 'manual', headers: { cookie: `__Host-gw_login=${callback.loginCookie}` } });
    const setCookie = answer.headers.getSetCookie().find((line) => line.startsWith('__Host-gw_session='))!;

    expect(start.status).toBe(302);
    // Pushed authorization request (RFC 9126): the browser carries a request_uri, not the parameters.
    expect(new URL(start.headers.get('location')!).searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    expect(location).toBe(`${t.baseUrl}/app/`);
    expect(setCookie.split(';').map((part) => part.trim().toLowerCase())).toEqual(expect.arrayContaining(['path=/', 'httponly', 'secure', 'samesite=strict']));
    expect(setCookie.toLowerCase()).not.toContain('domain=');
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      tenant: 'default',
      scopes: ['customers:write', 'customers:read', 'balances:read', 'bank_accounts:write', 'bank_accounts:read'],
      customer_ids: [],
    });
    expect(Date.parse(me.body.data!.expires_at as string)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(me.body)).not.toMatch(JWT_LIKE);
  });

  it('when a logged-in browser reads its customer’s balance and opens an account, then the session is that end user’s, with their rules', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const me = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);
    const mine = await createCustomer(t.baseUrl, partner);
    const theirs = await createCustomer(t.baseUrl, partner);
    await callApi(t.baseUrl, 'POST', `/api/v1/customers/${mine}/end-user`, { token: partner, body: { subject: 'demo', issuer: idp.issuer } });

    const balance = await withSession(t.baseUrl, 'GET', `/api/v1/customers/${mine}/balance`, session);
    const account = await withSession(t.baseUrl, 'POST', '/api/v1/bank-accounts', session, { body: buildBankAccountRequest({ customer_id: mine }) });
    const other = await withSession(t.baseUrl, 'GET', `/api/v1/customers/${theirs}/balance`, session);
    const after = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);
    const events = await t.asOwner<{ operation: string; client_id: string; caller_kind: string }>(
      `SELECT operation, client_id, caller_kind FROM audit_events WHERE operation IN ('balance.read', 'bank_account.create') AND customer_id = $1`,
      [mine],
    );

    expect([balance.status, account.status, other.status]).toEqual([200, 201, 404]);
    expect(after.body.data!.customer_ids).toEqual([mine]);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((event) => event.client_id === me.body.data!.id && event.caller_kind === 'end_user')).toBe(true);
  });

  it('when a request carries the cookie without X-CSRF, or from an origin not allowed, then it is 403 and nothing reaches the provider', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const customer = await createCustomer(t.baseUrl, partner);
    await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customer}/end-user`, { token: partner, body: { subject: 'demo', issuer: idp.issuer } });
    await clearSandbox(t.sandbox);

    const noHeader = await withSession(t.baseUrl, 'POST', '/api/v1/bank-accounts', session, {
      csrf: false,
      body: buildBankAccountRequest({ customer_id: customer }),
    });
    const wrongValue = await withSession(t.baseUrl, 'GET', '/api/v1/session', session, { csrf: false, headers: { 'x-csrf': '0' } });
    const crossSite = await withSession(t.baseUrl, 'POST', '/api/v1/bank-accounts', session, {
      origin: 'https://evil.example',
      body: buildBankAccountRequest({ customer_id: customer }),
    });
    const nullOrigin = await withSession(t.baseUrl, 'GET', '/api/v1/session', session, { origin: 'null' });
    const allowed = await withSession(t.baseUrl, 'GET', '/api/v1/session', session, { origin: 'https://app.partner.example' });
    const sameOrigin = await withSession(t.baseUrl, 'GET', '/api/v1/session', session, { origin: t.baseUrl });

    for (const refused of [noHeader, wrongValue, crossSite, nullOrigin])
      expect([refused.status, refused.body.error?.code]).toEqual([403, 'SESSION.CSRF_REJECTED']);
    expect([allowed.status, sameOrigin.status]).toEqual([200, 200]);
    expect(await journal(t.sandbox)).toEqual([]);
  });

  it('when a cross-site page preflights a call with the cookie, then CORS allows only the allowed origin, with credentials', async () => {
    const preflight = (origin: string) =>
      fetch(`${t.baseUrl}/api/v1/session`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-csrf' },
      });
    const allowed = await preflight('https://app.partner.example');
    const evil = await preflight('https://evil.example');

    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.partner.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-csrf');
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it.each([
    ['another origin', 'https://evil.example/'],
    ['a scheme-relative URL', '//evil.example/app/'],
    ['a backslash', '/\\evil.example'],
    ['a script', 'javascript:alert(1)'],
    ['a control character', '/app/\r\nSet-Cookie: x=1'],
  ])('when a login is asked to return to %s, then it is 400 and no login starts (no open redirect)', async (_what, target) => {
    const answer = await fetch(`${t.baseUrl}/api/v1/session/login?return_to=${encodeURIComponent(target)}`, { redirect: 'manual' });
    const body = (await answer.json()) as { error: { code: string; id: string } };

    expect([answer.status, body.error.code]).toEqual([400, 'SESSION.RETURN_TO_REFUSED']);
    expect(body.error.id).toBeDefined();
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.headers.getSetCookie()).toEqual([]);
  });

  it('when a login is started on another name for this host (localhost), then the browser is sent to start it on the public origin first', async () => {
    const { port } = new URL(t.baseUrl);
    const answer = await rawExchange(
      t.baseUrl,
      `GET /api/v1/session/login?return_to=%2Fapp%2F HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`,
    );
    const refused = await rawExchange(
      t.baseUrl,
      `GET /api/v1/session/login?return_to=%2F%2Fevil.example HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`,
    );

    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe(`${t.baseUrl}/api/v1/session/login?return_to=%2Fapp%2F`);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(refused.status).toBe(400);
  });

  it('when a login returns to an allowed origin, then the browser is sent there', async () => {
    const { location } = await webLogin(t.baseUrl, 'demo', 'https://app.partner.example/home?tab=1');

    expect(location).toBe('https://app.partner.example/home?tab=1');
  });

  it('when a callback is replayed, sent without its login cookie, or with a made-up state, then it is 400 and audited, and no session is made', async () => {
    const first = await webLoginUntilCallback(t.baseUrl, 'demo');
    const used = await fetch(first.callbackUrl, { redirect: 'manual', headers: { cookie: `__Host-gw_login=${first.loginCookie}` } });
    const replayed = await fetch(first.callbackUrl, { redirect: 'manual', headers: { cookie: `__Host-gw_login=${first.loginCookie}` } });
    // An attacker's own callback, sent to the victim's browser (login CSRF): the victim has no matching login cookie.
    const attackers = await webLoginUntilCallback(t.baseUrl, 'alex');
    const transplanted = await fetch(attackers.callbackUrl, { redirect: 'manual', headers: { cookie: `__Host-gw_login=${first.loginCookie}` } });
    const madeUp = await fetch(`${t.baseUrl}/api/v1/session/callback?code=x&state=${randomBytes(16).toString('base64url')}`, { redirect: 'manual' });
    const bodies = (await Promise.all([replayed, transplanted, madeUp].map((answer) => answer.json()))) as { error: { code: string; id: string } }[];
    const audited = await t.asOwner<{ error_id: string; operation: string; error_code: string }>(
      `SELECT error_id::text, operation, error_code FROM audit_events WHERE error_id = ANY($1::uuid[])`,
      [bodies.map((body) => body.error.id)],
    );

    expect(used.status).toBe(302);
    expect([replayed.status, transplanted.status, madeUp.status]).toEqual([400, 400, 400]);
    expect(bodies.map((body) => body.error.code)).toEqual(['SESSION.LOGIN_FAILED', 'SESSION.LOGIN_FAILED', 'SESSION.LOGIN_FAILED']);
    for (const answer of [replayed, transplanted, madeUp]) expect(setCookieValue(answer, '__Host-gw_session')).toBeUndefined();
    expect(audited.map((event) => [event.operation, event.error_code])).toEqual(
      expect.arrayContaining([...Array(3)].map(() => ['session.callback', 'SESSION.LOGIN_FAILED'])),
    );
    expect(audited).toHaveLength(3);
  });

  it('finding 12: when an attacker plants their own session cookie before the victim logs in, then the victim gets a new session and the planted one ends with the login', async () => {
    const attacker = await webLogin(t.baseUrl, 'alex');
    const attackerId = (await withSession(t.baseUrl, 'GET', '/api/v1/session', attacker.session)).body.data!.id;
    const victim = await webLoginUntilCallback(t.baseUrl, 'demo');

    const callback = await fetch(victim.callbackUrl, {
      redirect: 'manual',
      headers: { cookie: `__Host-gw_session=${attacker.session}; __Host-gw_login=${victim.loginCookie}` },
    });
    const victimSession = setCookieValue(callback, '__Host-gw_session')!;
    const victimView = await withSession(t.baseUrl, 'GET', '/api/v1/session', victimSession);
    const planted = await withSession(t.baseUrl, 'GET', '/api/v1/session', attacker.session);

    expect(victimSession).toBeDefined();
    expect(victimSession).not.toBe(attacker.session);
    expect(victimView.body.data!.id).not.toBe(attackerId);
    // One browser, one session: the login ends whatever session the browser carried.
    expect(planted.status).toBe(401);
  });

  it('when the browser logs out, then the cookie is cleared, the session is 401 on every replica, and the provider’s logout URL carries no token', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const before = await withSession(replica.baseUrl, 'GET', '/api/v1/session', session);

    const logout = await withSession(t.baseUrl, 'POST', '/api/v1/session/logout', session, { body: { return_to: '/app/' } });
    const here = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);
    const there = await waitFor(
      async () => {
        const answer = await withSession(replica.baseUrl, 'GET', '/api/v1/session', session);
        return answer.status === 401 ? answer : undefined;
      },
      { what: 'the other replica to refuse the ended session' },
    );
    const logoutUrl = new URL(logout.body.data!.logout_url as string);
    const event = await t.asOwner<{ client_id: string }>(`SELECT client_id FROM audit_events WHERE operation = 'session.logout' AND request_id = $1`, [
      logout.headers.get('x-request-id'),
    ]);

    expect(before.status).toBe(200);
    expect(logout.status).toBe(200);
    expect(logout.headers.getSetCookie().find((line) => line.startsWith('__Host-gw_session='))).toMatch(/^__Host-gw_session=;.*Max-Age=0/i);
    expect([here.status, here.body.error?.code]).toEqual([401, 'SESSION.ENDED']);
    expect(there.body.error?.code).toBe('SESSION.ENDED');
    expect(`${logoutUrl.origin}${logoutUrl.pathname}`).toBe(`${idp.issuer}/session/end`);
    expect(logoutUrl.searchParams.get('client_id')).toBe('partner-web');
    expect(logoutUrl.searchParams.get('post_logout_redirect_uri')).toBe(`${t.baseUrl}/app/`);
    expect(logoutUrl.href).not.toMatch(JWT_LIKE);
    expect(event).toEqual([{ client_id: before.body.data!.id }]);
  });

  it('when the user logs out at the provider, then its back-channel logout ends the session on the replica that holds it, and only the one made in that provider session', async () => {
    const { session, providerCookies } = await webLogin(t.baseUrl, 'demo');
    // demo in another browser: another session at the provider, which this logout does not end.
    const elsewhere = await webLogin(t.baseUrl, 'demo');
    const held = await withSession(replica.baseUrl, 'GET', '/api/v1/session', session);

    // The provider's own logout page, and its confirmation, as the user's browser would submit it.
    const page = await fetch(`${idp.issuer}/session/end?client_id=partner-web`, { headers: { cookie: providerCookies } });
    const html = await page.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)![1];
    const fields = new URLSearchParams(
      [...html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((match): [string, string] => [match[1], match[2]]),
    );
    fields.set('logout', 'yes');
    const confirmed = await fetch(new URL(action, idp.issuer), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: providerCookies, 'content-type': 'application/x-www-form-urlencoded' },
      body: fields,
    });
    const ended = await waitFor(
      async () => {
        const answer = await withSession(replica.baseUrl, 'GET', '/api/v1/session', session);
        return answer.status === 401 ? answer : undefined;
      },
      { what: 'the back-channel logout to end the session on the other replica', timeoutMs: 5000 },
    );
    const event = await t.asOwner<{ client_id: string; phase: string }>(
      `SELECT client_id, phase FROM audit_events WHERE operation = 'session.backchannel_logout'`,
    );

    expect(held.status).toBe(200);
    expect([303, 302]).toContain(confirmed.status);
    expect(ended.body.error?.code).toBe('SESSION.ENDED');
    expect((await withSession(replica.baseUrl, 'GET', '/api/v1/session', elsewhere.session)).status).toBe(200);
    expect(event).toContainEqual({ client_id: held.body.data!.id, phase: 'succeeded' });
  });

  it.each([
    ['no token', ''],
    ['garbage', 'logout_token=not-a-jwt'],
    ['an unsigned token', `logout_token=${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"demo"}').toString('base64url')}.`],
    ['two tokens', 'logout_token=a.b.c&logout_token=d.e.f'],
  ])('when the back-channel logout is sent %s, then it is 400 in the envelope', async (_what, form) => {
    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/session/backchannel-logout', {
      rawBody: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

    expect([answer.status, answer.body.error?.code]).toEqual([400, 'SESSION.INVALID_LOGOUT_TOKEN']);
    expect(answer.body.error?.id).toBeDefined();
  });

  it('when a form is posted anywhere but the back-channel logout, then it is 415 as before', async () => {
    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      rawBody: 'reference=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

    expect([answer.status, answer.body.error?.code]).toEqual([415, 'REQUEST.UNSUPPORTED_MEDIA_TYPE']);
  });

  it('when a session has gone idle or past its absolute timeout, then it is 401 on a replica that reads it', async () => {
    const idle = await webLogin(t.baseUrl, 'demo');
    const old = await webLogin(t.baseUrl, 'demo');
    await t.asOwner(`UPDATE browser_sessions SET last_seen_at = now() - interval '2 hours' WHERE id_hash = $1`, [hashOf(idle.session)]);
    await t.asOwner(`UPDATE browser_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1`, [hashOf(old.session)]);

    const idleAnswer = await withSession(replica.baseUrl, 'GET', '/api/v1/session', idle.session);
    const oldAnswer = await withSession(replica.baseUrl, 'GET', '/api/v1/session', old.session);

    expect([idleAnswer.status, idleAnswer.body.error?.code]).toEqual([401, 'SESSION.ENDED']);
    expect([oldAnswer.status, oldAnswer.body.error?.code]).toEqual([401, 'SESSION.ENDED']);
  });

  it('when sessions are stored, then the id is only a hash, the tokens are sealed, and nothing token-like reaches the audit log or the logs', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const me = await withSession(t.baseUrl, 'GET', '/api/v1/session', session);

    const logins = await t.asOwner<{ client_id: string; caller_kind: string; phase: string }>(
      `SELECT client_id, caller_kind, phase FROM audit_events WHERE operation = 'session.callback' AND client_id = $1`,
      [me.body.data!.id],
    );
    const rows = await t.asOwner<Record<string, unknown>>('SELECT * FROM browser_sessions');
    const pending = await t.asOwner<Record<string, unknown>>('SELECT * FROM browser_logins');
    const audit = await t.asOwner<Record<string, unknown>>('SELECT * FROM audit_events');
    const stored = JSON.stringify([rows, pending]);

    // The login is audited under the end user's pseudonym.
    expect(logins).toContainEqual({ client_id: me.body.data!.id, caller_kind: 'end_user', phase: 'succeeded' });
    expect(rows.length).toBeGreaterThan(0);
    expect(stored).not.toContain(session);
    // The sealed tokens are JWE (five parts, encrypted): no signed token is readable in them.
    expect(rows.every((row) => String(row.sealed_tokens).split('.').length === 5)).toBe(true);
    expect(stored).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(JSON.stringify(audit)).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(JSON.stringify(audit)).not.toContain('"demo"');
    expect(t.logs.text).not.toContain(session);
    expect(t.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
  });

  it('when a request has both a bearer token and the cookie, then the token decides', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner, headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } });

    expect(answer.body.data).toMatchObject({ role: 'partner' });
  });
});

describe('browser sessions whose access tokens expire', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let replica: TestApp;

  beforeAll(async () => {
    // Twenty-second access tokens: every use is within the renewal margin (a minute), so every use renews.
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE, accessTokenSeconds: 20 });
    const env = webClientEnv(idp.issuer);
    t = await startTestApp(env);
    replica = await startTestApp(env, { database: t.database });
    await idp.setWebOrigins([t.baseUrl]);
  });

  afterAll(async () => {
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
    await idp?.close();
  });

  it('when requests on two replicas at once find the access token about to expire, then it is renewed with the refresh token and every request succeeds', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const versionOf = async () =>
      (await t.asOwner<{ version: number }>(`SELECT version FROM browser_sessions WHERE id_hash = $1`, [hashOf(session)]))[0].version;
    const before = await versionOf();

    const answers = await Promise.all(
      [t, replica, t, replica, t, replica].map((app) =>
        callApi(app.baseUrl, 'GET', '/api/v1/session', { headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } }),
      ),
    );
    const after = await versionOf();
    const again = await callApi(t.baseUrl, 'GET', '/api/v1/session', { headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } });

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(before).toBe(1);
    expect(after).toBeGreaterThan(1);
    expect(again.status).toBe(200);
    expect(await versionOf()).toBeGreaterThan(after);
  });
});

describe('browser sessions whose client authenticates with private_key_jwt', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = 'gateway-1';
    idp = await startDevIdentityProvider({
      port: 0,
      audience: TEST_AUDIENCE,
      webClientKeys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }],
    });
    const { OIDC_CLIENT_SECRET: _secret, ...env } = webClientEnv(idp.issuer, {
      OIDC_CLIENT_PRIVATE_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }),
    });
    t = await startTestApp(env);
    await idp.setWebOrigins([t.baseUrl]);
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('when demo logs in, then the pushed request and the code exchange are authenticated with a signed assertion, and the session works', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');

    const me = await callApi(t.baseUrl, 'GET', '/api/v1/session', { headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } });

    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ tenant: 'default' });
  });
});
