import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, JWTPayload, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import type { TrustedIssuer } from '../../config/end-user-settings';
import { DpopRequired, InvalidToken, IssuerUnavailable } from '../domain/auth.errors';
import { EndUserTokens, TokenPresentation, VerifiedEndUser } from '../domain/end-user-tokens.port';
import { scopesOf } from '../domain/scopes';
import { DpopProofs } from './dpop-proofs';
import { IssuerDirectory, KEYS_TRUSTED_FOR_MS } from './issuer-metadata';

export interface AccessTokenSettings {
  readonly clockSkewSeconds: number;
  readonly maxLifetimeSeconds: number;
  /** FAPI 2.0: an end-user token must be DPoP-bound. */
  readonly requireDpop: boolean;
}

/** RFC 9068 section 2.1: `at+jwt`; its long form is the same media type. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);
/** Tokens whose verification is remembered, at most (about 300 bytes each). */
const REMEMBERED_TOKENS = 10_000;
/** A token far larger than any issuer makes is not worth parsing. */
const MAX_TOKEN_LENGTH = 8192;
/**
 * What jose throws when the token is at fault: no key of the issuer's fits it, its signature or
 * claims are wrong, it is malformed, or its algorithm is not allowed. Anything else (the JWKS did not
 * answer, answered an error, or answered what is not a JWKS) says nothing about the token.
 */
const TOKEN_FAULTS = [
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
  errors.JWSSignatureVerificationFailed,
  errors.JWTClaimValidationFailed,
  errors.JWTExpired,
  errors.JWSInvalid,
  errors.JWTInvalid,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
];

interface VerifiedToken {
  readonly user: Omit<VerifiedEndUser, 'senderConstrained'>;
  /** cnf.jkt: the key the token is bound to, if any. */
  readonly jkt?: string;
  /**
   * Until when the verification is remembered, in ms: the token's expiry (with the leeway), and no
   * later than KEYS_TRUSTED_FOR_MS after the JWKS holding its key was read, so a key removed from the
   * JWKS stops every token it signed within that time.
   */
  readonly rememberedUntilMs: number;
}

/**
 * Access tokens from the issuers the service trusts (RFC 9068), verified with jose: the issuer's
 * keys from its discovery document, the algorithms it advertises (asymmetric only), `iss`, `aud`,
 * `exp`, `nbf`, `iat` with OIDC_CLOCK_SKEW_SECONDS of leeway, `typ` `at+jwt` (RFC 9068 section 4:
 * an ID token is not an access token), a lifetime of at most OIDC_MAX_TOKEN_LIFETIME_SECONDS. A token
 * verified once is remembered (by its SHA-256) until it expires, and for at most ten minutes after
 * its issuer's keys were read, so an app's next calls cost a hash; its DPoP proof is checked on every
 * call.
 */
export class JoseEndUserTokens extends EndUserTokens {
  readonly enabled: boolean;
  readonly issuers: readonly string[];
  private readonly trusted: Map<string, TrustedIssuer>;
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: REMEMBERED_TOKENS });

  constructor(
    issuers: readonly TrustedIssuer[],
    private readonly settings: AccessTokenSettings,
    private readonly proofs: DpopProofs,
    private readonly directory = new IssuerDirectory(),
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.trusted = new Map(issuers.map((issuer) => [issuer.issuer, issuer]));
    this.enabled = this.trusted.size > 0;
    this.issuers = [...this.trusted.keys()];
  }

  async verify(token: string, presentation: TokenPresentation): Promise<VerifiedEndUser> {
    // Made only when a token is refused: an error's stack trace is not free, and most calls succeed.
    const refused = () => new InvalidToken({ scheme: presentation.scheme });
    if (token.length > MAX_TOKEN_LENGTH) throw refused();
    const hash = createHash('sha256').update(token, 'ascii').digest('base64url');
    let found = this.verified.get(hash);
    if (found && found.rememberedUntilMs <= this.now()) {
      this.verified.delete(hash);
      found = undefined;
    }
    if (!found) {
      found = await this.verifyToken(token, refused);
      this.verified.set(hash, found);
    }

    if (found.jkt !== undefined) {
      // RFC 9449 section 7.1: a bound token presented as a bearer token is refused.
      if (presentation.heldByService) throw refused();
      if (presentation.scheme !== 'dpop') throw new DpopRequired('The token is bound to a key: send it as `Authorization: DPoP <token>` with a DPoP proof');
      await this.proofs.check({ proof: presentation.proof, method: presentation.method, url: presentation.url, accessToken: token, jkt: found.jkt });
      return { ...found.user, senderConstrained: true };
    }
    // An unbound token sent under the DPoP scheme claims a binding it does not have.
    if (presentation.scheme === 'dpop') throw new InvalidToken({ scheme: 'dpop' });
    if (this.settings.requireDpop && !presentation.heldByService) {
      throw new DpopRequired('This service accepts end users’ tokens only bound to a key (DPoP, RFC 9449): ask the OpenID provider for a DPoP-bound token');
    }
    return { ...found.user, senderConstrained: false };
  }

  private async verifyToken(token: string, refused: () => InvalidToken): Promise<VerifiedToken> {
    let unverified: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.typ !== 'string' || !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) throw refused();
      unverified = decodeJwt(token);
    } catch {
      throw refused();
    }
    const issuer = typeof unverified.iss === 'string' ? this.trusted.get(unverified.iss) : undefined;
    if (!issuer) throw refused();

    const { keys, algorithms, readAt } = await this.directory.keysOf(issuer.issuer);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: issuer.issuer,
        audience: issuer.audience,
        algorithms,
        clockTolerance: this.settings.clockSkewSeconds,
        maxTokenAge: this.settings.maxLifetimeSeconds + this.settings.clockSkewSeconds,
        requiredClaims: ['exp', 'iat', 'sub'],
        currentDate: new Date(this.now()),
      }));
    } catch (error) {
      if (error instanceof IssuerUnavailable) throw error;
      if (TOKEN_FAULTS.some((fault) => error instanceof fault)) throw refused();
      // Whether the token is good is not known: the issuer's keys could not be used.
      throw new IssuerUnavailable(error);
    }
    const { sub, exp, iat } = payload as { sub: unknown; exp: number; iat: number };
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > 255) throw refused();
    if (exp - iat > this.settings.maxLifetimeSeconds) throw refused();
    const cnf = payload.cnf as { jkt?: unknown } | undefined;
    if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) throw refused();
    return {
      user: { issuer: issuer.issuer, subject: sub, tenant: issuer.tenant, scopes: scopesOf(payload.scope) },
      jkt: cnf?.jkt as string | undefined,
      rememberedUntilMs: Math.min((exp + this.settings.clockSkewSeconds) * 1000, (readAt() ?? this.now()) + KEYS_TRUSTED_FOR_MS),
    };
  }
}
