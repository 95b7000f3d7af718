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
  /** The ID token's display claims (name, preferred_username, email), shown to the user only. */
  readonly displayClaims?: DisplayClaims;
}

/** What an ID token says to show a user as, where the provider gives it. */
export interface DisplayClaims {
  readonly name?: string;
  readonly preferredUsername?: string;
  readonly email?: string;
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
  /** Revokes a refresh token at the provider (RFC 7009) when it advertises a revocation endpoint; does nothing otherwise. @throws when the provider cannot be asked. */
  abstract revoke(refreshToken: string): Promise<void>;
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
   * Claims the renewal of the session's tokens for `leaseMs`: true when the session is still at
   * `version` and no other request (of any replica) holds a claim, so this one may ask the provider.
   * Nothing is held while the provider is asked: no row lock, no connection.
   */
  abstract claimRenewal(idHash: string, version: number, leaseMs: number): Promise<boolean>;
  /**
   * Saves renewed tokens, if the session is still at `version`, and gives the claim up. Undefined
   * when the session has ended meanwhile.
   */
  abstract saveRenewal(idHash: string, version: number, renewed: { sealedTokens: string; accessExpiresAt: Date }): Promise<StoredSession | undefined>;
  /** Gives a claim up without renewing (the provider could not be asked). */
  abstract releaseRenewal(idHash: string, version: number): Promise<void>;
  /** Ends one session, on every replica. */
  abstract end(idHash: string): Promise<StoredSession | undefined>;
  /**
   * Ends, on every replica, the sessions made in a provider session (`sidHash`, of `endUser` when
   * given), or else every session of `endUser`, at an issuer. With `once`, in the same transaction
   * as recording its key: a key already recorded ends nothing (`alreadyUsed`), and a failure to end
   * them records nothing, so the sender's retry is not refused as a replay.
   */
  abstract endAll(
    where: { issuer: string; endUser?: string; sidHash?: string },
    once?: { key: string; expiresAt: Date },
  ): Promise<{ ended: StoredSession[]; alreadyUsed: boolean }>;
  /** The live sessions of an end user (by pseudonym), newest first (at most 100). */
  abstract listOf(endUser: string): Promise<StoredSession[]>;
  /** Ends, on every replica, every session of an end user (by pseudonym). */
  abstract endAllOf(endUser: string): Promise<StoredSession[]>;
}

/** Seals secrets at rest (authenticated encryption), each to its context: a sealed value opens only where it was sealed. */
export abstract class SealedBox {
  abstract seal(value: object, context: string): Promise<string>;
  /** @throws when the value was not sealed with this key for this context. */
  abstract open<T>(sealed: string, context: string): Promise<T>;
}
