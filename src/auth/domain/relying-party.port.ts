/** The OpenID provider as this service, a relying party, sees it, for web apps' browser sessions (docs/security.md, "Web apps"). */

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
