/**
 * The ports of the browser session (docs/security.md, "Web apps"): the OpenID provider as this
 * service's relying party sees it, where sessions are kept, and what seals their secrets.
 */

/** A login sent to the provider: where the browser goes, and what the callback must match. */
export interface LoginStart {
  readonly url: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/** What the callback must match, besides the browser that started the login. */
export interface ExpectedCallback {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
}

/** The tokens a session holds: never sent to the browser. */
export interface SessionTokens {
  readonly accessToken: string;
  /** When the access token expires, in milliseconds since the epoch. */
  readonly accessExpiresAt: number;
  readonly refreshToken?: string;
  readonly idToken?: string;
}

/** A completed login: the tokens, and who the ID token says logged in. */
export interface CompletedLogin extends SessionTokens {
  readonly subject: string;
  /** The provider's session id (`sid`), for back-channel logout. */
  readonly sid?: string;
}

/** A verified logout token (OpenID Connect Back-Channel Logout 1.0): whose sessions end. */
export interface LogoutNotice {
  readonly subject?: string;
  readonly sid?: string;
  readonly jti: string;
  /** Until when its `jti` must be remembered. */
  readonly expiresAt: Date;
}

/** The provider refused a refresh token (revoked, expired, reused): the session cannot go on past its access token. */
export class RefreshRefused extends Error {
  constructor(cause?: unknown) {
    super('The provider refused the refresh token', { cause });
    this.name = 'RefreshRefused';
  }
}

/**
 * This service as a confidential client of the partner's OpenID provider: authorization code with
 * PKCE, state and nonce; pushed authorization requests when the provider has them.
 */
export abstract class RelyingParty {
  abstract readonly issuer: string;
  /** @throws IssuerUnavailable. */
  abstract startLogin(redirectUri: string): Promise<LoginStart>;
  /** @throws LoginFailed (with what failed, never a token) or IssuerUnavailable. */
  abstract finishLogin(callbackUrl: URL, expected: ExpectedCallback): Promise<CompletedLogin>;
  /** @throws RefreshRefused when the provider refuses the refresh token; IssuerUnavailable when it cannot be asked. */
  abstract refresh(refreshToken: string): Promise<SessionTokens>;
  /** Where to send the browser to log out at the provider too (RP-initiated logout); undefined when it has no end_session_endpoint. */
  abstract logoutUrl(postLogoutRedirectUri: string): Promise<string | undefined>;
  /** @throws InvalidLogoutToken. */
  abstract readLogoutToken(token: string): Promise<LogoutNotice>;
}

/** A login under way, kept between its start and its callback. */
export interface PendingLogin {
  readonly stateHash: string;
  /** The SHA-256 of the login cookie of the browser that started it. */
  readonly bindingHash: string;
  readonly sealed: string;
  readonly expiresAt: Date;
}

/** A session as stored: its id only as a hash, its tokens sealed. */
export interface StoredSession {
  readonly idHash: string;
  readonly tenant: string;
  /** The end user's pseudonym. */
  readonly endUser: string;
  readonly issuer: string;
  readonly sidHash?: string;
  readonly sealedTokens: string;
  readonly accessExpiresAt: Date;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  /** The absolute timeout. */
  readonly expiresAt: Date;
  readonly version: number;
}

/** Where sessions are kept, shared by every replica. */
export abstract class BrowserSessionStore {
  abstract saveLogin(login: PendingLogin): Promise<void>;
  /** The login, removed: a second callback with the same state finds nothing. Undefined when unknown or expired. */
  abstract takeLogin(stateHash: string): Promise<Omit<PendingLogin, 'stateHash'> | undefined>;
  abstract create(session: StoredSession): Promise<void>;
  /** `fresh`: read from the store itself, not from what this replica remembers. */
  abstract find(idHash: string, fresh?: boolean): Promise<StoredSession | undefined>;
  abstract touch(idHash: string, at: Date): Promise<void>;
  /**
   * Renews the session's tokens, one replica at a time: `renew` is called only if, once this
   * replica holds the session, it is still `stale` (another may have renewed it meanwhile).
   */
  abstract renew(
    idHash: string,
    stale: (session: StoredSession) => boolean,
    renew: (session: StoredSession) => Promise<{ sealedTokens: string; accessExpiresAt: Date }>,
  ): Promise<StoredSession | undefined>;
  /** Ends one session, on every replica. */
  abstract end(idHash: string): Promise<StoredSession | undefined>;
  /**
   * Ends, on every replica, the sessions made in a provider session (`sidHash`, of `endUser` when
   * given), or else every session of `endUser`, at an issuer.
   */
  abstract endAll(where: { issuer: string; endUser?: string; sidHash?: string }): Promise<StoredSession[]>;
}

/** Seals secrets at rest (authenticated encryption), each to its context: a sealed value opens only where it was sealed. */
export abstract class SealedBox {
  abstract seal(value: object, context: string): Promise<string>;
  /** @throws when the value was not sealed with this key for this context. */
  abstract open<T>(sealed: string, context: string): Promise<T>;
}
