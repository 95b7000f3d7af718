import { InvalidToken } from './auth.errors';
import type { StaffClaims } from './staff';

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
  readonly kind: 'end_user';
  readonly issuer: string;
  readonly subject: string;
  readonly tenant: string;
  readonly scopes: readonly string[];
  /** The token is bound to a key (cnf.jkt) and came with a valid proof of it. */
  readonly senderConstrained: boolean;
}

/** A staff member, as the company's provider's verified access token says (their roles not yet mapped: domain/staff.ts). */
export interface VerifiedStaff {
  readonly kind: 'staff';
  readonly issuer: string;
  /** The token's `sub` (their id is the STAFF_ID_CLAIM's, which may be another claim). */
  readonly subject: string;
  readonly claims: StaffClaims;
  /** The token is bound to a key (cnf.jkt) and came with a valid proof of it. */
  readonly senderConstrained: boolean;
}

/**
 * Verifies access tokens against the issuers the service trusts: the partners' providers (end
 * users) and the company's own (staff), each with its own audience. The adapter speaks OpenID
 * Connect Discovery, JWKS, RFC 9068 and RFC 9449.
 * @throws InvalidToken for a token it cannot accept, InvalidDpopProof for a bad proof,
 *   IssuerUnavailable when the issuer's keys cannot be fetched.
 */
export abstract class AccessTokens {
  /** Whether any issuer is trusted: without one, every token is a client token. */
  abstract readonly enabled: boolean;
  /** The end users' issuers trusted, as configured. */
  abstract readonly issuers: readonly string[];
  abstract verify(token: string, presentation: TokenPresentation): Promise<VerifiedEndUser | VerifiedStaff>;

  /** An end user's token only (a web app's session holds no other): a staff token is refused as any other token would be. */
  async verifyEndUser(token: string, presentation: TokenPresentation): Promise<VerifiedEndUser> {
    const holder = await this.verify(token, presentation);
    if (holder.kind !== 'end_user') throw new InvalidToken({ scheme: presentation.scheme });
    return holder;
  }
}

/** No issuer configured: a token that looks like a JWT is simply not one of ours. */
export class NoAccessTokens extends AccessTokens {
  readonly enabled = false;
  readonly issuers: readonly string[] = [];
  verify(): Promise<VerifiedEndUser> {
    return Promise.reject(new Error('No OpenID provider is configured'));
  }
}
