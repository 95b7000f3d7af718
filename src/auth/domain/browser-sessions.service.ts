import { createHash, randomBytes } from 'node:crypto';
import type { RecordedClient } from '../../common/domain/request-record';
import { endUserCaller, type AuthenticatedClient } from './api-client';
import { InvalidToken, InvalidLogoutToken, LoginFailed, ReturnToRefused, SessionEnded, SessionsNotConfigured } from './auth.errors';
import { BrowserSessionStore, StoredSession } from './browser-session-store.port';
import { RelyingParty, SessionTokens } from './relying-party.port';
import { SealedBox } from '../../common/domain/sealed-box.port';
import { AccessTokens } from './access-tokens.port';
import { Pseudonyms } from './pseudonyms';
import { SessionTokenKeeper } from './session-token-keeper';

/** How long a login may take at the provider. */
const LOGIN_TTL_MS = 10 * 60_000;
/** The last use of a session is written at most this often, and at least four times per idle timeout (so the sweep never takes a session in use). */
const TOUCH_AT_MOST_EVERY_MS = 60_000;

/** A random id of 32 bytes, as it is sent in a cookie. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export const hashOf = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url');

export interface SessionRuntimeSettings {
  readonly idleTimeoutSeconds: number;
  readonly absoluteTimeoutSeconds: number;
  /** The origins a session's requests may come from, and a login may return to: the public one first. */
  readonly allowedOrigins: () => readonly string[];
  /** The origin browsers reach this service at. */
  readonly publicOrigin: () => string;
  /** PUBLIC_BASE_URL is set (production): the origin is the operator's, never taken from a request. */
  readonly publicOriginConfigured: boolean;
  /** The path of the callback on the public origin: with it, the redirect URI registered at the provider. */
  readonly callbackPath: string;
}

/** A session as the web app may see it: who, until when. */
export interface SessionView {
  readonly client: AuthenticatedClient;
  readonly expiresAt: Date;
  readonly idleExpiresAt: Date;
}

interface SealedLogin {
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly state: string;
  readonly returnTo: string;
  readonly redirectUri: string;
  /** The SHA-256 of the session the browser had when the login started: it ends when the login completes. */
  readonly previousSessionHash?: string;
}

/**
 * The backend-for-frontend session of RFC 10017 (OAuth 2.0 for Browser-Based Applications,
 * section 6.1): this service is the web app's confidential OAuth client; it runs the code flow,
 * keeps the tokens, and gives the browser an HttpOnly cookie that names a session and nothing
 * else. A request with the cookie is an end user's, with the same rules as one with their access
 * token: the token the session holds is verified as any other.
 */
export class BrowserSessions {
  /** The sessions' tokens: opened, and renewed one request at a time. */
  private readonly tokens?: SessionTokenKeeper;

  private readonly settings?: SessionRuntimeSettings;
  private readonly provider?: RelyingParty;
  private readonly sealed?: SealedBox;

  constructor(
    /** What a configured service has; none: sessions are off, and their endpoints say so. */
    configured: { settings: SessionRuntimeSettings; provider: RelyingParty; box: SealedBox } | undefined,
    private readonly store: BrowserSessionStore,
    private readonly endUsers: AccessTokens,
    private readonly pseudonyms: Pseudonyms,
    private readonly now: () => number = Date.now,
    sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    this.settings = configured?.settings;
    this.provider = configured?.provider;
    this.sealed = configured?.box;
    this.tokens = configured && new SessionTokenKeeper(configured.provider, configured.box, store, now, sleep);
  }

  get enabled(): boolean {
    return this.settings !== undefined;
  }

  /** The origins a request with the session cookie may come from (the anti-forgery rules), the public one first. */
  allowedOrigins(): readonly string[] {
    return this.configured().settings.allowedOrigins();
  }

  private configured(): { settings: SessionRuntimeSettings; provider: RelyingParty } {
    if (!this.settings || !this.provider) throw new SessionsNotConfigured();
    return { settings: this.settings, provider: this.provider };
  }

  private get box(): SealedBox {
    if (!this.sealed) throw new SessionsNotConfigured();
    return this.sealed;
  }

  private get keeper(): SessionTokenKeeper {
    if (!this.tokens) throw new SessionsNotConfigured();
    return this.tokens;
  }

  /**
   * Where to start a login asked for on another origin than the public one, when that origin is
   * the default (`http://127.0.0.1:<port>`): a developer who opened `localhost` is sent to the
   * origin where the login cookie and the session cookie will live. Undefined: start here.
   */
  loginOriginFor(requestOrigin: string): string | undefined {
    const { settings } = this.configured();
    if (settings.publicOriginConfigured) return undefined;
    const origin = settings.publicOrigin();
    return requestOrigin === origin ? undefined : origin;
  }

  /** Where the provider sends the browser back. */
  redirectUri(): string {
    const { settings } = this.configured();
    return `${settings.publicOrigin()}${settings.callbackPath}`;
  }

  /**
   * Where a login or logout may send the browser: a path on this service, or a URL on an allowed
   * origin. Anything else (another origin, `//host`, a scheme, control characters) is refused.
   * @throws ReturnToRefused.
   */
  returnTo(value: string | undefined): string {
    const { settings } = this.configured();
    const origin = settings.publicOrigin();
    if (value === undefined || value === '') return `${origin}/`;
    // eslint-disable-next-line no-control-regex -- refusing them is the point
    if (value.length > 2000 || /[\u0000-\u001f\u007f\\]/.test(value)) throw new ReturnToRefused();
    const relative = value.startsWith('/') && !value.startsWith('//');
    const url = URL.parse(value, origin);
    // A path that resolves to `//…` stays here, but reads as another host to anything that redirects on it.
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.pathname.startsWith('//')) {
      throw new ReturnToRefused();
    }
    if (relative ? url.origin !== origin : !settings.allowedOrigins().includes(url.origin)) throw new ReturnToRefused();
    return url.href;
  }

  /** Starts a login: where to send the browser, and the login cookie that binds the callback to it. */
  /**
   * Starts a login: where to send the browser, and the login cookie that binds the callback to it.
   * `previousCookie` is the session cookie the browser sent with the start (a navigation from the
   * app's own page, so SameSite=Strict lets it through, where the provider's redirect to the
   * callback would not): that session ends when this login completes. One browser, one session.
   */
  async startLogin(returnTo: string | undefined, previousCookie?: string): Promise<{ location: string; loginCookie: string }> {
    const { provider } = this.configured();
    const target = this.returnTo(returnTo);
    const redirectUri = this.redirectUri();
    const start = await provider.startLogin(redirectUri);
    const loginCookie = randomBytes(32).toString('base64url');
    const stateHash = hashOf(start.state);
    const login: SealedLogin = {
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
      state: start.state,
      returnTo: target,
      redirectUri,
      ...(previousCookie !== undefined && COOKIE_VALUE.test(previousCookie) ? { previousSessionHash: hashOf(previousCookie) } : {}),
    };
    await this.store.saveLogin({
      stateHash,
      bindingHash: hashOf(loginCookie),
      sealed: await this.box.seal(login, `login:${stateHash}`),
      expiresAt: new Date(this.now() + LOGIN_TTL_MS),
    });
    return { location: start.url, loginCookie };
  }

  /**
   * The provider's callback: the login it belongs to (once, and only in the browser that started
   * it), the code exchanged, the ID token checked, and a new session (a new id whatever cookie the
   * browser had: no fixation).
   * @throws LoginFailed.
   */
  async finishLogin(
    query: URLSearchParams,
    loginCookie: string | undefined,
    /** The session cookie the callback itself carries, if any (a provider on the same site): it ends too. */
    presentedSession?: string,
  ): Promise<{ sessionId: string; returnTo: string; client: RecordedClient }> {
    const { provider } = this.configured();
    const state = query.get('state');
    if (!state || query.getAll('state').length !== 1) throw new LoginFailed('The callback has no state');
    const pending = await this.store.takeLogin(hashOf(state));
    if (!pending) throw new LoginFailed('The state is unknown, expired or already used');
    if (typeof loginCookie !== 'string' || hashOf(loginCookie) !== pending.bindingHash) {
      throw new LoginFailed('The login was started in another browser');
    }
    const login = await this.box.open<SealedLogin>(pending.sealed, `login:${hashOf(state)}`);
    if (query.has('error')) throw new LoginFailed('The provider refused the login');
    const callbackUrl = new URL(login.redirectUri);
    callbackUrl.search = query.toString();
    const completed = await provider.finishLogin(callbackUrl, login);

    let user;
    try {
      user = await this.endUsers.verifyEndUser(completed.accessToken, { scheme: 'bearer', proof: undefined, method: 'GET', url: '', heldByService: true });
    } catch (error) {
      if (error instanceof InvalidToken)
        throw new LoginFailed('The provider’s access token is not one this service accepts (issuer, audience or lifetime)', error);
      throw error;
    }
    if (user.issuer !== provider.issuer || user.subject !== completed.subject) throw new LoginFailed('The access token is for another user than the ID token');

    const sessionId = randomBytes(32).toString('base64url');
    const idHash = hashOf(sessionId);
    const now = this.now();
    const endUser = this.pseudonyms.of(user.issuer, user.subject);
    const tokens: SessionTokens = {
      accessToken: completed.accessToken,
      accessExpiresAt: completed.accessExpiresAt,
      refreshToken: completed.refreshToken,
      idToken: completed.idToken,
      displayClaims: completed.displayClaims,
    };
    await this.store.create({
      idHash,
      tenant: user.tenant,
      endUser,
      issuer: user.issuer,
      sidHash: completed.sid === undefined ? undefined : hashOf(completed.sid),
      sealedTokens: await this.keeper.seal(tokens, idHash),
      accessExpiresAt: new Date(completed.accessExpiresAt),
      createdAt: new Date(now),
      lastSeenAt: new Date(now),
      expiresAt: new Date(now + this.configured().settings.absoluteTimeoutSeconds * 1000),
      version: 1,
    });
    // One browser, one session: the one it had at the login's start, and one its callback carries, end.
    const previous = new Set([
      login.previousSessionHash,
      presentedSession !== undefined && COOKIE_VALUE.test(presentedSession) ? hashOf(presentedSession) : undefined,
    ]);
    for (const ended of previous) if (ended !== undefined && ended !== idHash) await this.endByHash(ended);
    return {
      sessionId,
      returnTo: login.returnTo,
      client: endUserCaller(endUser, user.tenant, user.scopes, { subject: user.subject, ...completed.displayClaims }),
    };
  }

  /**
   * The end user behind a request with the session cookie (its anti-forgery rules already met, by
   * the HTTP layer): only while the session lasts. The access token is renewed when it is about to
   * expire, by one request of one replica at a time.
   * @throws SessionEnded, IssuerUnavailable.
   */
  async authenticate(cookie: string): Promise<SessionView> {
    const { settings } = this.configured();
    if (!COOKIE_VALUE.test(cookie)) throw new SessionEnded();
    const idHash = hashOf(cookie);
    const live = await this.live(idHash);

    let seen = live;
    if (this.now() - live.lastSeenAt.getTime() >= Math.min(TOUCH_AT_MOST_EVERY_MS, (settings.idleTimeoutSeconds * 1000) / 4)) {
      const at = new Date(this.now());
      await this.store.touch(idHash, at);
      seen = { ...live, lastSeenAt: at };
    }
    const { session, tokens } = await this.keeper.fresh(seen);

    let user;
    try {
      user = await this.endUsers.verifyEndUser(tokens.accessToken, {
        scheme: 'bearer',
        proof: undefined,
        method: 'GET',
        // Held by this service, never presented with a DPoP proof: no URL to match.
        url: '',
        heldByService: true,
      });
    } catch (error) {
      if (error instanceof InvalidToken) throw new SessionEnded('The session’s access token is no longer accepted: log in again');
      throw error;
    }
    const id = this.pseudonyms.of(user.issuer, user.subject);
    if (id !== session.endUser || user.tenant !== session.tenant) throw new SessionEnded();
    return {
      client: endUserCaller(id, user.tenant, user.scopes, { subject: user.subject, ...tokens.displayClaims }),
      expiresAt: session.expiresAt,
      idleExpiresAt: new Date(Math.min(session.expiresAt.getTime(), session.lastSeenAt.getTime() + settings.idleTimeoutSeconds * 1000)),
    };
  }

  /** The session, if it has not ended, expired or gone idle (on any replica). */
  private async live(idHash: string): Promise<StoredSession> {
    const { settings } = this.configured();
    const idle = (session: StoredSession) => this.now() - session.lastSeenAt.getTime() >= settings.idleTimeoutSeconds * 1000;
    let session = await this.store.find(idHash);
    // Another replica may have seen it used since this one last did.
    if (session && idle(session)) session = await this.store.find(idHash, true);
    if (!session) throw new SessionEnded();
    if (this.now() >= session.expiresAt.getTime() || idle(session)) {
      await this.store.end(idHash);
      throw new SessionEnded('The session has expired: log in again');
    }
    return session;
  }

  /**
   * Ends the session of this cookie here (every replica) and, when the provider has a revocation
   * endpoint, revokes its refresh token there (RFC 7009); then says where to send the browser to log
   * out at the provider too (RP-initiated logout). Needs nothing but the cookie: the provider being
   * down neither keeps the session nor fails the logout (no `logoutUrl` then). The ID token is not
   * sent: the provider asks.
   * @throws ReturnToRefused.
   */
  async logout(cookies: readonly string[], returnTo: string | undefined): Promise<{ ended?: StoredSession; logoutUrl?: string }> {
    const { provider } = this.configured();
    const target = this.returnTo(returnTo);
    // A cookie sent twice: which one the browser meant cannot be told, so both end.
    let ended: StoredSession | undefined;
    for (const cookie of cookies) if (COOKIE_VALUE.test(cookie)) ended = (await this.endByHash(hashOf(cookie))) ?? ended;
    const logoutUrl = await provider.logoutUrl(target).catch(() => undefined);
    return { ended, logoutUrl };
  }

  /**
   * Ends a session (by its id's hash) on every replica, and revokes its refresh token at the
   * provider when it can (a failure there is not the user's: the row is gone).
   */
  private async endByHash(idHash: string): Promise<StoredSession | undefined> {
    const ended = await this.store.end(idHash);
    if (ended) await this.revoke(ended);
    return ended;
  }

  private async revoke(session: StoredSession): Promise<void> {
    const { provider } = this.configured();
    try {
      const tokens = await this.box.open<SessionTokens>(session.sealedTokens, `session:${session.idHash}`);
      if (tokens.refreshToken) await provider.revoke(tokens.refreshToken);
    } catch {
      // Sealed under another key, or the provider could not be asked: the session has ended here all the same.
    }
  }

  /**
   * A logout token from the provider (OpenID Connect Back-Channel Logout 1.0): every session of
   * its `sid`, or of its `sub`, ends on every replica. A token is accepted once: its `jti` is used
   * up in the same transaction that ends the sessions, so a failure leaves the provider's retry good.
   * @throws InvalidLogoutToken.
   */
  async backchannelLogout(token: string): Promise<{ client?: RecordedClient; ended: number }> {
    const { provider } = this.configured();
    const notice = await provider.readLogoutToken(token);
    const endUser = notice.subject === undefined ? undefined : this.pseudonyms.of(provider.issuer, notice.subject);
    const { ended, alreadyUsed } = await this.store.endAll(
      { issuer: provider.issuer, endUser, sidHash: notice.sid === undefined ? undefined : hashOf(notice.sid) },
      { key: createHash('sha256').update(`logout-token\0${provider.issuer}\0${notice.jti}`).digest('hex'), expiresAt: notice.expiresAt },
    );
    if (alreadyUsed) throw new InvalidLogoutToken('The logout token was already used');
    const [one] = ended;
    // The audit names whose sessions ended (by pseudonym), when any did.
    return { client: one && endUserCaller(one.endUser, one.tenant), ended: ended.length };
  }

  /** An end user's live sessions (by pseudonym), for an operator. */
  async sessionsOf(endUser: string): Promise<StoredSession[]> {
    return this.store.listOf(endUser);
  }

  /** Ends every session of an end user (by pseudonym) on every replica, and revokes their refresh tokens where the provider can. */
  async endSessionsOf(endUser: string): Promise<StoredSession[]> {
    const ended = await this.store.endAllOf(endUser);
    if (this.enabled) for (const session of ended) await this.revoke(session);
    return ended;
  }
}
