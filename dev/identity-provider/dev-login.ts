import { createHash, randomBytes } from 'node:crypto';
import { PARTNER_SCOPES } from '../../src/partner-api/domain/partner-api.vocabulary';
import { DEV_APP_REDIRECT_URI, DEV_CLIENTS } from './dev-identity-provider';

/** What the token endpoint answered (RFC 6749 section 5.1). */
export interface DevTokens {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly scope?: string;
  readonly id_token?: string;
  readonly refresh_token?: string;
}

export interface DevLoginOptions {
  readonly issuer: string;
  readonly user: string;
  /** The password typed at the login form; the user's name by default (the development users' passwords). */
  readonly password?: string;
  /** The gateway's audience: the resource the token is for (RFC 8707). */
  readonly audience: string;
  /** The scopes asked for; every gateway scope by default. */
  readonly scopes?: readonly string[];
  /** The client logged in with: the native app's (`partner-app`) unless said. */
  readonly clientId?: string;
  /** Makes a DPoP proof for the token request, so that the token is bound to the signer's key (RFC 9449). */
  readonly dpop?: (method: string, url: string) => Promise<string>;
}

/** Cookies a login sets, sent back on the next steps (the provider's session and interaction). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Logs a development end user in the way a native app does (RFC 8252): the authorization code
 * flow with PKCE (RFC 7636, S256) and `state`, through the development OpenID provider's own login
 * form, then the code exchanged at its token endpoint. What `npm run users -- token` and the
 * tests use; a real app does the same in the system browser.
 */
export async function devLogin(options: DevLoginOptions): Promise<DevTokens> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL('/auth', options.issuer);
  authorize.search = new URLSearchParams({
    client_id: options.clientId ?? DEV_CLIENTS.app,
    response_type: 'code',
    redirect_uri: DEV_APP_REDIRECT_URI,
    scope: ['openid', ...(options.scopes ?? PARTNER_SCOPES)].join(' '),
    resource: options.audience,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
  }).toString();

  const redirect = await throughLoginForm(
    authorize.toString(),
    options.user,
    options.password ?? options.user,
    new CookieJar(),
    (next) => `${next.origin}${next.pathname}` === DEV_APP_REDIRECT_URI,
  );
  if (redirect.searchParams.get('state') !== state) throw new Error('The login answered with another state');
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`The login was refused: ${redirect.searchParams.get('error') ?? 'no code'}`);
  return exchange(options, code, verifier);
}

/**
 * Follows a login at the development provider as a browser does: its redirects, with its cookies
 * (kept in `jar`), and its form filled in once, until a redirect points where `done` says; that
 * URL is returned.
 */
async function throughLoginForm(start: string, user: string, password: string, jar: CookieJar, done: (next: URL) => boolean): Promise<URL> {
  let url = start;
  let method: 'GET' | 'POST' = 'GET';
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    jar.take(response);
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      await response.arrayBuffer();
      if (done(next)) return next;
      url = next.href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const page = await response.text();
    const form = /<form method="post" action="([^"]+)"/.exec(page);
    if (response.status !== 200 || !form || body !== undefined) throw new Error(`The login failed (${response.status}): wrong user or password?`);
    url = new URL(form[1], url).href;
    method = 'POST';
    body = new URLSearchParams({ login: user, password });
  }
  throw new Error('The login did not end');
}

async function exchange(options: DevLoginOptions, code: string, verifier: string): Promise<DevTokens> {
  const tokenUrl = new URL('/token', options.issuer).href;
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(options.dpop ? { dpop: await options.dpop('POST', tokenUrl) } : {}) },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: DEV_APP_REDIRECT_URI,
      client_id: options.clientId ?? DEV_CLIENTS.app,
      code_verifier: verifier,
      resource: options.audience,
    }),
  });
  const answer = (await response.json()) as DevTokens & { error?: string; error_description?: string };
  if (response.status !== 200) throw new Error(`The token endpoint refused the code: ${answer.error ?? response.status} ${answer.error_description ?? ''}`);
  return answer;
}

/** A web app's login stopped at the provider's answer: the callback the browser would be sent to, and its login cookie. */
export interface WebLoginCallback {
  readonly callbackUrl: string;
  /** The value of the gateway's login cookie (__Host-gw_login), which binds the callback to the browser. */
  readonly loginCookie: string;
  /** The provider's cookies (its session with the user), as a Cookie header. */
  readonly providerCookies: string;
}

/** The value a Set-Cookie line of `response` gives the cookie `name`, if any. */
export function setCookieValue(response: Response, name: string): string | undefined {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * A web app's login through the gateway's browser session, as a browser makes it, up to the
 * provider's redirect back: GET the gateway's login (its login cookie kept), the provider's form
 * filled in, its redirects followed until they point at the gateway's callback. `session`: the
 * session cookie the browser already holds, sent with the start (a same-site navigation).
 */
export async function webLoginUntilCallback(gateway: string, user: string, returnTo = '/app/', session?: string): Promise<WebLoginCallback> {
  const start = await fetch(`${gateway}/api/v1/session/login?return_to=${encodeURIComponent(returnTo)}`, {
    redirect: 'manual',
    headers: session === undefined ? {} : { cookie: `__Host-gw_session=${session}` },
  });
  const answer = await start.text();
  const loginCookie = setCookieValue(start, '__Host-gw_login');
  const first = start.headers.get('location');
  if (start.status !== 302 || !first || !loginCookie) throw new Error(`The gateway did not start a login (${start.status}): ${answer}`);
  const jar = new CookieJar();
  const callback = await throughLoginForm(first, user, user, jar, (next) => next.href.startsWith(`${gateway}/api/v1/session/callback`));
  return { callbackUrl: callback.href, loginCookie, providerCookies: jar.header() };
}

/** A web app's whole login: the session cookie's value, and where the gateway sent the browser. */
export async function webLogin(
  gateway: string,
  user: string,
  returnTo = '/app/',
  previousSession?: string,
): Promise<{ session: string; location: string; providerCookies: string }> {
  const { callbackUrl, loginCookie, providerCookies } = await webLoginUntilCallback(gateway, user, returnTo, previousSession);
  const callback = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: `__Host-gw_login=${loginCookie}` } });
  const text = await callback.text();
  const session = setCookieValue(callback, '__Host-gw_session');
  if (callback.status !== 302 || !session) throw new Error(`The callback failed (${callback.status}): ${text}`);
  return { session, location: callback.headers.get('location') ?? '', providerCookies };
}
