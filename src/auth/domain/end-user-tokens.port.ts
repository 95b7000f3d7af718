/** How the request presented its access token (RFC 6750 or RFC 9449), and what a DPoP proof must match. */
export interface TokenPresentation {
  readonly scheme: 'bearer' | 'dpop';
  /** The `DPoP` header: undefined when absent, an array when sent more than once. */
  readonly proof: string | string[] | undefined;
  /** The request's method, as the router saw it. */
  readonly method: string;
  /** The request's URL without query or fragment, built on the canonical path the router used. */
  readonly url: string;
  /** The token is held by this service for a browser session, never presented by a client: OIDC_REQUIRE_DPOP does not apply. */
  readonly heldByService?: boolean;
}

/** An end user, as their verified access token says: who, from which issuer, for which tenant, allowed what. */
export interface VerifiedEndUser {
  readonly issuer: string;
  readonly subject: string;
  readonly tenant: string;
  readonly scopes: readonly string[];
  /** The token is bound to a key (cnf.jkt) and came with a valid proof of it. */
  readonly senderConstrained: boolean;
}

/**
 * Verifies end users' access tokens against the issuers the service trusts. The adapter speaks
 * OpenID Connect Discovery, JWKS, RFC 9068 and RFC 9449.
 * @throws InvalidToken for a token it cannot accept, InvalidDpopProof for a bad proof,
 *   IssuerUnavailable when the issuer's keys cannot be fetched.
 */
export abstract class EndUserTokens {
  /** Whether any issuer is trusted: without one, every token is a client token. */
  abstract readonly enabled: boolean;
  /** The issuers trusted, as configured. */
  abstract readonly issuers: readonly string[];
  abstract verify(token: string, presentation: TokenPresentation): Promise<VerifiedEndUser>;
}

/** No issuer configured: a token that looks like a JWT is simply not one of ours. */
export class NoEndUserTokens extends EndUserTokens {
  readonly enabled = false;
  readonly issuers: readonly string[] = [];
  verify(): Promise<VerifiedEndUser> {
    return Promise.reject(new Error('No OpenID provider is configured'));
  }
}
