import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, JWK } from 'jose';
import { PARTNER_SCOPES } from '../../src/partner-api/domain/partner-api.vocabulary';
import { canonicalTarget } from '../../src/common/http/canonical-target';
import { SESSION_PATHS } from '../../src/auth/domain/session-endpoints';
import type { DevelopmentProviders } from '../../src/config/gateway-config';

/** Where the gateway serves the reference web app in sandbox mode. */
export const WEB_APP_PATH = '/app/';

/**
 * The development OpenID provider: what a partner's own provider is in production, run in-process
 * in sandbox mode so that end-user tokens work out of the box. It is oidc-provider (panva's
 * OpenID Certified implementation) with:
 * - two end users, `demo` and `alex` (each one's password is their name);
 * - `partner-app`, a public client for native apps: authorization code + PKCE (S256), loopback
 *   redirect URIs on any port (RFC 8252 section 7.3), DPoP-bound tokens when asked (RFC 9449);
 * - `swagger-ui`, the same for Swagger UI's Authorize button;
 * - `partner-web`, a confidential client (secret `partner-web-secret`): the gateway itself, as the
 *   backend of a web app's browser session (its callback, its post-logout return, its back-channel
 *   logout; refresh tokens always); pushed authorization requests (RFC 9126) are advertised;
 * - JWT access tokens (RFC 9068) for one resource, the gateway (its audience), with its scopes.
 * Consent is given on the user's behalf: every client here is the partner's own.
 * Never for production: its users, secrets and in-memory sessions are fixed and public.
 */

/** The development end users: the subject is the name, and so is the password. */
export const DEV_USERS = {
  demo: { name: 'Demo User', email: 'demo@example.com' },
  alex: { name: 'Alex Example', email: 'alex@example.com' },
} as const;
export type DevUser = keyof typeof DEV_USERS;

export const DEV_CLIENTS = {
  app: 'partner-app',
  swagger: 'swagger-ui',
  web: 'partner-web',
  /** The staff provider's one client: Swagger UI and `npm run users -- token --staff`, authorization code + PKCE. */
  staff: 'staff-console',
} as const;

/**
 * The development staff: what the company's own provider (Entra ID, Okta, Keycloak) is in
 * production, run as a second development provider in sandbox mode. One user per role, each
 * signing in with a second factor (`amr` pwd + otp), and `pat`, who holds every role and signs in
 * with a password only (so is refused wherever a role needs a second factor). The password is the
 * user's name. Their roles are in the `roles` claim, as STAFF_ROLES_CLAIM expects by default.
 */
export const DEV_STAFF = {
  sam: { name: 'Sam Support', email: 'sam@gateway-operator.example', roles: ['support'], amr: ['pwd', 'otp'] },
  casey: { name: 'Casey Compliance', email: 'casey@gateway-operator.example', roles: ['compliance'], amr: ['pwd', 'otp'] },
  oli: { name: 'Oli Operator', email: 'oli@gateway-operator.example', roles: ['operator'], amr: ['pwd', 'otp'] },
  pat: { name: 'Pat Password-Only', email: 'pat@gateway-operator.example', roles: ['support', 'compliance', 'operator'], amr: ['pwd'] },
} as const;
export type DevStaffMember = keyof typeof DEV_STAFF;

/** The one scope the staff provider grants for the gateway: what staff may do is their roles', not scopes. */
export const DEV_STAFF_SCOPE = 'gateway:staff';
export const DEV_WEB_CLIENT_SECRET = 'partner-web-secret';

/** Where a native app's login ends (a loopback redirect: any port, RFC 8252 section 7.3). */
export const DEV_APP_REDIRECT_URI = 'http://127.0.0.1/callback';

/** Where partner-web's public keys are published when it authenticates with private_key_jwt. */
const WEB_CLIENT_JWKS_PATH = '/dev/partner-web/jwks.json';

/** Access tokens live ten minutes: long enough to try things, short as production ones are. */
const ACCESS_TOKEN_SECONDS = 600;

export interface DevIdentityProvider {
  readonly issuer: string;
  /**
   * The origins the gateway serves web apps on: partner-web's redirect and post-logout URIs, and
   * its back-channel logout URI (on the first). The provider starts afresh with them (tokens
   * already issued stay valid: the signing key is the same).
   */
  setWebOrigins(origins: readonly string[]): Promise<void>;
  /** How many refresh tokens the provider has revoked or otherwise destroyed since it started. */
  refreshTokensDestroyed(): number;
  close(): Promise<void>;
}

export interface DevIdentityProviderOptions {
  readonly port: number;
  readonly host?: string;
  /** The gateway's audience (OIDC_AUDIENCE): the one resource tokens are issued for. */
  readonly audience: string;
  /** Where the signing key is kept across restarts; in memory when unset. */
  readonly keysDir?: string;
  /** Swagger UI's redirect URIs (its oauth2-redirect.html on the gateway). */
  readonly swaggerRedirectUris?: readonly string[];
  /** The gateway's origins for web apps (partner-web): http://127.0.0.1:3000 when unset; see setWebOrigins. */
  readonly webOrigins?: readonly string[];
  /** Access tokens' lifetime in seconds (ten minutes when unset). */
  readonly accessTokenSeconds?: number;
  /** partner-web authenticates with private_key_jwt (RFC 7523) and these public keys, instead of its secret. */
  readonly webClientKeys?: readonly JWK[];
  /**
   * The staff provider instead (DEV_STAFF, the `staff-console` client, `audience` the staff one):
   * the company's provider's stand-in, apart from the partners' end users' one.
   */
  readonly staff?: boolean;
}

/** The provider's ES256 signing key: kept under `dir` when given, so tokens survive a restart. */
async function signingKey(dir: string | undefined, name: string): Promise<JWK> {
  const file = dir && join(dir, name);
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as JWK;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: randomBytes(8).toString('base64url') };
  if (file && dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, JSON.stringify(jwk), { mode: 0o600 });
  }
  return jwk;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** RP-initiated logout's question: oidc-provider's form (its hidden fields), and the two answers that submit it. */
function logoutPage(form: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign out (development OpenID provider)</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 24rem; margin: 3rem auto">
<h1>Sign out?</h1>
${form}
<p><button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button></p>
</body></html>`;
}

/** After a logout that named no post-logout redirect URI. */
function signedOutPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Signed out (development OpenID provider)</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 24rem; margin: 3rem auto">
<h1>Signed out</h1><p>You are signed out of the development OpenID provider.</p>
</body></html>`;
}

function loginPage(uid: string, clientId: string, failed: boolean, staff: boolean): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in (development OpenID provider)</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 24rem; margin: 3rem auto">
<h1>Sign in</h1>
<p>${
    staff
      ? `Development staff provider, for <code>${escapeHtml(clientId)}</code>. Staff: <code>sam</code> (support), <code>casey</code> (compliance), <code>oli</code> (operator), each with a second factor taken as given; <code>pat</code> (every role, password only)`
      : `Development OpenID provider, for <code>${escapeHtml(clientId)}</code>. Users: <code>demo</code> and <code>alex</code>`
  }; the password is the user's name.</p>
${failed ? '<p role="alert" style="color: #b00">Unknown user or wrong password.</p>' : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<p><label>User <input name="login" autofocus required></label></p>
<p><label>Password <input name="password" type="password" required></label></p>
<p><button type="submit">Sign in</button></p>
</form></body></html>`;
}

async function formOf(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 8192) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the development OpenID provider on 127.0.0.1 (or `host`); port 0: any free port. */
export async function startDevIdentityProvider(options: DevIdentityProviderOptions): Promise<DevIdentityProvider> {
  // oidc-provider is an ES module.
  const { default: Provider, errors } = await import('oidc-provider');
  // Its in-memory store, named rather than defaulted: in memory is what development wants (its
  // warning is for a production provider that forgot its adapter). One store for every build below,
  // so logins survive setWebOrigins.
  const { createMemoryAdapter } = await import('oidc-provider/lib/adapters/memory_adapter.js');
  const adapter = createMemoryAdapter();
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `The development ${options.staff ? 'staff provider' : 'OpenID provider'} cannot listen on ${host}:${options.port}: the port is taken (is a gateway in sandbox mode running?). Set ${options.staff ? 'DEV_STAFF_OIDC_PORT' : 'DEV_OIDC_PORT'} (0 for any free port).`,
              { cause: error },
            )
          : error,
      ),
    );
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const issuer = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  const resourceScope = PARTNER_SCOPES.join(' ');

  const staff = options.staff === true;
  const users: Record<string, { name: string; email: string; roles?: readonly string[]; amr?: readonly string[] }> = staff ? DEV_STAFF : DEV_USERS;
  const swaggerRedirectUris = options.swaggerRedirectUris?.length
    ? [...options.swaggerRedirectUris]
    : ['http://127.0.0.1/oauth2-redirect.html', 'http://localhost/oauth2-redirect.html'];
  // The command line's client, and Swagger UI's under the same name as at the end users' provider (Swagger UI has one client id for every login).
  const staffClients = [
    {
      client_id: DEV_CLIENTS.staff,
      application_type: 'native' as const,
      token_endpoint_auth_method: 'none' as const,
      grant_types: ['authorization_code'],
      response_types: ['code' as const],
      redirect_uris: [DEV_APP_REDIRECT_URI],
    },
    {
      client_id: DEV_CLIENTS.swagger,
      application_type: 'native' as const,
      token_endpoint_auth_method: 'none' as const,
      grant_types: ['authorization_code'],
      response_types: ['code' as const],
      // Swagger UI's popup, and the gateway's own sign-in to /docs in live mode (loopback: any port, RFC 8252 section 7.3).
      redirect_uris: [...swaggerRedirectUris, 'http://127.0.0.1/staff/callback', 'http://localhost/staff/callback'],
    },
  ];
  const build = (webOrigins: readonly string[]) =>
    new Provider(issuer, {
      adapter,
      clients: staff
        ? staffClients
        : [
            {
              client_id: DEV_CLIENTS.app,
              application_type: 'native',
              token_endpoint_auth_method: 'none',
              grant_types: ['authorization_code', 'refresh_token'],
              response_types: ['code'],
              redirect_uris: [DEV_APP_REDIRECT_URI, 'com.example.partner:/callback'],
            },
            {
              client_id: DEV_CLIENTS.swagger,
              application_type: 'native',
              token_endpoint_auth_method: 'none',
              grant_types: ['authorization_code'],
              response_types: ['code'],
              redirect_uris: options.swaggerRedirectUris?.length
                ? [...options.swaggerRedirectUris]
                : ['http://127.0.0.1/oauth2-redirect.html', 'http://localhost/oauth2-redirect.html'],
            },
            {
              client_id: DEV_CLIENTS.web,
              ...(options.webClientKeys
                ? // Its keys by URI, as a partner registers its gateway's: fetched and parsed by oidc-provider itself.
                  { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${issuer}${WEB_CLIENT_JWKS_PATH}` }
                : { client_secret: DEV_WEB_CLIENT_SECRET, token_endpoint_auth_method: 'client_secret_basic' }),
              grant_types: ['authorization_code', 'refresh_token'],
              response_types: ['code'],
              redirect_uris: webOrigins.map((origin) => `${origin}${SESSION_PATHS.callback}`),
              post_logout_redirect_uris: webOrigins.flatMap((origin) => [`${origin}/`, `${origin}${WEB_APP_PATH}`]),
              backchannel_logout_uri: `${webOrigins[0]}${SESSION_PATHS.backchannelLogout}`,
              backchannel_logout_session_required: true,
            },
          ],
      jwks: { keys: [signing] },
      clientDefaults: { id_token_signed_response_alg: 'ES256' },
      enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
      renderError: (ctx, out) => {
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = `${out.error}: ${out.error_description ?? ''}\n`;
      },
      cookies: { keys: [cookieKey] },
      scopes: staff ? ['openid', 'profile', DEV_STAFF_SCOPE] : ['openid', 'offline_access', ...PARTNER_SCOPES],
      // A staff token names its holder, their roles and how they signed in, as a company's provider's does.
      extraTokenClaims: (_ctx: unknown, token: { kind: string; accountId?: string }) => {
        if (!staff || token.kind !== 'AccessToken' || !token.accountId) return undefined;
        const member = users[token.accountId];
        return member && { name: member.name, roles: [...(member.roles ?? [])], amr: [...(member.amr ?? [])] };
      },
      claims: { openid: ['sub'], email: ['email'], profile: ['name', 'preferred_username'] },
      // The ID token carries the display claims its scopes ask for, as many providers do (the gateway shows them to the user).
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      // The code flow only (OAuth 2.1, FAPI 2.0): no implicit or hybrid responses.
      responseTypes: ['code'],
      ttl: { AccessToken: accessTokenSeconds, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 86_400, Grant: 86_400, RefreshToken: 86_400 },
      // Swagger UI exchanges its code from the browser.
      clientBasedCORS: () => true,
      // Its back-channel logout calls the gateway, which listens on loopback too: oidc-provider's guard
      // against requests to special-use addresses (SSRF) is lifted for loopback URLs, and only for them.
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        const { dispatcher, ...rest } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
        const target = new URL(url instanceof Request ? url.url : url);
        const loopback = target.hostname === '127.0.0.1' || target.hostname === 'localhost';
        return globalThis.fetch(url, loopback ? rest : { ...rest, dispatcher });
      },
      // The gateway's web client gets a refresh token with every login, so that its sessions outlive an access token.
      issueRefreshToken: (_ctx: unknown, client: { clientId: string; grantTypeAllowed(type: string): boolean }, source: { scopes: Set<string> }) =>
        client.grantTypeAllowed('refresh_token') && (client.clientId === DEV_CLIENTS.web || source.scopes.has('offline_access')),
      features: {
        devInteractions: { enabled: false },
        backchannelLogout: { enabled: true },
        // The logout pages in this provider's own plain style (as its login page): oidc-provider's defaults load a web font.
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: (ctx: { body: unknown }, form: string) => {
            ctx.body = logoutPage(form);
          },
          postLogoutSuccessSource: (ctx: { body: unknown }) => {
            ctx.body = signedOutPage();
          },
        },
        // RFC 7009: the gateway revokes a session's refresh token when the session is logged out.
        revocation: {
          enabled: true,
          // A client revokes its own tokens only (RFC 7009 section 2.1), as the default does: said here, not defaulted.
          allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId,
        },
        dPoP: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.audience,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (indicator !== options.audience) throw new errors.InvalidTarget();
            return {
              scope: staff ? DEV_STAFF_SCOPE : resourceScope,
              audience: options.audience,
              accessTokenTTL: accessTokenSeconds,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'ES256' } },
            };
          },
        },
      },
      findAccount: (_ctx: unknown, sub: string) => {
        const user = Object.hasOwn(users, sub) ? users[sub] : undefined;
        if (!user) return undefined;
        return { accountId: sub, claims: () => ({ sub, name: user.name, preferred_username: sub, email: user.email }) };
      },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    });
  const accessTokenSeconds = options.accessTokenSeconds ?? ACCESS_TOKEN_SECONDS;
  const signing = await signingKey(options.keysDir, options.staff ? 'dev-staff-oidc-signing-key.json' : 'dev-oidc-signing-key.json');
  const cookieKey = randomBytes(32).toString('base64url');
  /** Built on the first request, or when the gateway's origins are known: once, in the usual start. */
  let built: { provider: ReturnType<typeof build>; callback: ReturnType<ReturnType<typeof build>['callback']> } | undefined;
  let refreshTokensDestroyed = 0;
  const start = (origins: readonly string[]) => {
    const provider = build(origins);
    provider.on('server_error', () => undefined);
    provider.on('refresh_token.destroyed', () => (refreshTokensDestroyed += 1));
    built = { provider, callback: provider.callback() };
    return built;
  };
  const current = () => built ?? start(options.webOrigins?.length ? options.webOrigins : ['http://127.0.0.1:3000']);

  const interaction = async (request: IncomingMessage, response: ServerResponse, path: string): Promise<void> => {
    const { provider } = current();
    const details = await provider.interactionDetails(request, response);
    const { uid, prompt, params } = details;
    if (prompt.name === 'consent') {
      // The partner's own apps: consent is given for whatever they asked.
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session!.accountId, clientId: params.client_id as string });
      const missing = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
      if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant!.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant!.save();
      await provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    if (request.method === 'POST' && path.endsWith('/login')) {
      const form = await formOf(request);
      const login = form.get('login') ?? '';
      if (Object.hasOwn(users, login) && form.get('password') === login) {
        await provider.interactionFinished(request, response, { login: { accountId: login } }, { mergeWithLastSubmission: false });
        return;
      }
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(loginPage(uid, String(params.client_id), true, staff));
      return;
    }
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(loginPage(uid, String(params.client_id), false, staff));
  };

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // The path as the gateway's router reads a target: an odd spelling (`/%69nteraction/…`, `/x/../interaction/…`)
    // is refused rather than routed one way here and another way by oidc-provider.
    const target = canonicalTarget(request.url ?? '/');
    if (target.refusal) {
      response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`${target.refusal.message}\n`);
      return;
    }
    const path = target.path;
    if (path === WEB_CLIENT_JWKS_PATH && options.webClientKeys) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: options.webClientKeys }));
      return;
    }
    if (path.startsWith('/interaction/')) {
      interaction(request, response, path).catch(() => {
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('The login session has expired or is invalid: start again from the app.');
      });
      return;
    }
    void current().callback(request, response);
  });

  return {
    issuer,
    setWebOrigins: (origins) => {
      if (origins.length === 0) return Promise.reject(new Error('Give at least one origin'));
      start(origins);
      return Promise.resolve();
    },
    refreshTokensDestroyed: () => refreshTokensDestroyed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The development provider as the application trusts it: its issuer, the gateway's web client there and Swagger UI's. */
export function asTrustedProvider(issuer: string): NonNullable<DevelopmentProviders['identityProvider']> {
  return { issuer, webClient: { clientId: DEV_CLIENTS.web, secret: DEV_WEB_CLIENT_SECRET }, swaggerClientId: DEV_CLIENTS.swagger };
}

/** The development staff provider as the application trusts it: its issuer, and Swagger UI's client there. */
export function asTrustedStaffProvider(issuer: string): NonNullable<DevelopmentProviders['staffProvider']> {
  return { issuer, swaggerClientId: DEV_CLIENTS.swagger };
}
