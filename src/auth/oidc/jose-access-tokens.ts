import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, JWTPayload, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import type { TrustedIssuer } from '../../config/end-user-settings';
import { DpopRequired, InvalidToken, IssuerUnavailable } from '../domain/auth.errors';
import { AccessTokens, TokenPresentation, VerifiedEndUser, VerifiedStaff } from '../domain/access-tokens.port';
import type { StaffClaims } from '../domain/staff';
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

/** The company's provider, where staff sign in: its tokens' audience, and the claims that name a staff member and their groups. */
export interface StaffIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The claim holding their stable id (`sub`, or Entra ID's `oid`). */
  readonly idClaim: string;
  /** The claim holding their roles or groups; a dotted path reaches into objects (`realm_access.roles`). */
  readonly rolesClaim: string;
}

/** Staff ids, names and groups longer than this are not a provider's: the token is refused. */
const MAX_STAFF_ID = 255;
const MAX_STAFF_NAME = 200;
const MAX_GROUPS = 200;

/** The value at a claim's dotted path, own properties only. */
function claimAt(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim that is a string or a list of strings, as a list; anything else is malformed (undefined). */
function stringsOf(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  return undefined;
}

/** What a staff token says of its holder, or undefined when a claim is missing or malformed. */
function staffClaimsOf(payload: JWTPayload, issuer: StaffIssuer): StaffClaims | undefined {
  const id = claimAt(payload, issuer.idClaim);
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_STAFF_ID || !id.isWellFormed()) return undefined;
  const groups = stringsOf(claimAt(payload, issuer.rolesClaim));
  // RFC 8176: amr is a JSON array of strings.
  const amr = payload.amr === undefined || Array.isArray(payload.amr) ? stringsOf(payload.amr) : undefined;
  if (!groups || groups.length > MAX_GROUPS || !amr) return undefined;
  const named = [payload.name, payload.preferred_username].find((value) => typeof value === 'string' && value.trim() !== '') as string | undefined;
  const name = (named ?? id).trim().slice(0, MAX_STAFF_NAME).toWellFormed();
  const acr = typeof payload.acr === 'string' ? payload.acr : undefined;
  return { id, name, groups, amr, ...(acr === undefined ? {} : { acr }) };
}

type TokenHolder = Omit<VerifiedEndUser, 'senderConstrained'> | Omit<VerifiedStaff, 'senderConstrained'>;

interface VerifiedToken {
  readonly user: TokenHolder;
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
export class JoseAccessTokens extends AccessTokens {
  readonly enabled: boolean;
  readonly issuers: readonly string[];
  private readonly trusted: Map<string, TrustedIssuer | (StaffIssuer & { readonly staff: true })>;
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: REMEMBERED_TOKENS });

  constructor(
    issuers: readonly TrustedIssuer[],
    private readonly settings: AccessTokenSettings,
    private readonly proofs: DpopProofs,
    private readonly directory = new IssuerDirectory(),
    private readonly now: () => number = Date.now,
    /** The company's provider, whose tokens name staff; undefined, none. */
    staff?: StaffIssuer,
  ) {
    super();
    this.trusted = new Map(issuers.map((issuer) => [issuer.issuer, issuer]));
    this.issuers = [...this.trusted.keys()];
    if (staff) {
      // One issuer, one kind of caller: a staff provider that also issued end users' tokens would make one the other.
      if (this.trusted.has(staff.issuer)) throw new Error(`The staff issuer ${staff.issuer} is also an end users' issuer: give staff their own provider`);
      this.trusted.set(staff.issuer, { ...staff, staff: true });
    }
    this.enabled = this.trusted.size > 0;
  }

  async verify(token: string, presentation: TokenPresentation): Promise<VerifiedEndUser | VerifiedStaff> {
    // Made only when a token is refused: an error's stack trace is not free, and most calls succeed.
    const refused = () => new InvalidToken({ scheme: presentation.scheme });
    if (token.length > MAX_TOKEN_LENGTH) throw refused();
    // The token's SHA-256: the key of the tokens remembered, and what a DPoP proof's `ath` must be (RFC 9449 section 4.2).
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
      await this.proofs.check({ proof: presentation.proof, method: presentation.method, url: presentation.url, accessTokenHash: hash, jkt: found.jkt });
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
    let user: TokenHolder;
    if ('staff' in issuer) {
      const claims = staffClaimsOf(payload, issuer);
      if (!claims) throw refused();
      user = { kind: 'staff', issuer: issuer.issuer, subject: sub, claims };
    } else {
      user = { kind: 'end_user', issuer: issuer.issuer, subject: sub, tenant: issuer.tenant, scopes: scopesOf(payload.scope) };
    }
    return {
      user,
      jkt: cnf?.jkt as string | undefined,
      rememberedUntilMs: Math.min((exp + this.settings.clockSkewSeconds) * 1000, (readAt() ?? this.now()) + KEYS_TRUSTED_FOR_MS),
    };
  }
}
