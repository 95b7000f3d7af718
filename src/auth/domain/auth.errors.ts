import { DomainError } from '../../common/domain/domain-error';

/** The provider's own 401 wording, reused so partners see one vocabulary. */
export const INVALID_TOKEN_DETAILS = 'The token is invalid or expired';

/** The realm every challenge names. */
const REALM = 'realm="partner-gateway"';

/** The JWS algorithms the service accepts in DPoP proofs (RFC 9449 section 5.1, `algs`). */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA'] as const;

/** The WWW-Authenticate challenge of a refused request (RFC 6750 section 3, RFC 9449 section 7.1). */
export function challengeOf(scheme: 'bearer' | 'dpop', error?: 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof', scope?: string): string {
  const parts = [REALM];
  if (error) parts.push(`error="${error}"`);
  if (scope) parts.push(`scope="${scope}"`);
  if (scheme === 'dpop') parts.push(`algs="${DPOP_ALGORITHMS.join(' ')}"`);
  return `${scheme === 'dpop' ? 'DPoP' : 'Bearer'} ${parts.join(', ')}`;
}

/**
 * No token, or one the service cannot accept: the provider's own 401. A token that was presented
 * and refused is answered with `error="invalid_token"` in the challenge (RFC 6750 section 3.1).
 */
export class InvalidToken extends DomainError {
  constructor(presented?: { scheme?: 'bearer' | 'dpop'; details?: string }) {
    super('AUTH.INVALID_TOKEN', {
      details: presented?.details ?? INVALID_TOKEN_DETAILS,
      challenge: presented?.scheme ? challengeOf(presented.scheme, 'invalid_token') : undefined,
    });
  }
}

/**
 * No token could be read from the request: no Authorization header (nor a session cookie), or
 * one of another form. `details` names what is missing or malformed. The challenge names no error
 * (RFC 6750 section 3.1): the plain Bearer one, or the one of the path that asked (a browser's prompt on /docs).
 */
export class TokenMissing extends DomainError {
  constructor(details = 'Send the token as `Authorization: Bearer <token>`') {
    super('AUTH.TOKEN_MISSING', { details });
  }
}

/**
 * The token must be sent bound to its key, with a proof (RFC 9449): a DPoP-bound token presented
 * as a bearer token (section 7.1), or an unbound one where the service requires DPoP (OIDC_REQUIRE_DPOP).
 */
export class DpopRequired extends DomainError {
  constructor(details: string) {
    super('AUTH.DPOP_REQUIRED', { details, challenge: challengeOf('dpop', 'invalid_token') });
  }
}

/** A DPoP proof that is missing, malformed, replayed, or for another key, token, method or URL (RFC 9449). */
export class InvalidDpopProof extends DomainError {
  constructor(reason: string) {
    super('AUTH.INVALID_DPOP_PROOF', { details: reason, challenge: challengeOf('dpop', 'invalid_dpop_proof') });
  }
}

/** A valid end-user token that does not grant the operation's scope. */
export class InsufficientScope extends DomainError {
  constructor(scope: string, scheme: 'bearer' | 'dpop') {
    super('AUTH.INSUFFICIENT_SCOPE', { details: `Requires the ${scope} scope`, challenge: challengeOf(scheme, 'insufficient_scope', scope) });
  }
}

/** The issuer's discovery document or keys could not be fetched: whether the token is good is not known. */
export class IssuerUnavailable extends DomainError {
  constructor(cause?: unknown) {
    super('AUTH.ISSUER_UNAVAILABLE', { retryAfterSeconds: 5, cause });
  }
}

/** An end user's token on an endpoint for partner servers or admins only. */
export class EndUsersNotAllowed extends DomainError {
  constructor() {
    super('AUTH.FORBIDDEN', { details: 'End-user tokens cannot call this endpoint' });
  }
}

/** A staff member's token on an operation for partners or end users, or on one their roles do not reach. */
export class StaffNotAllowed extends DomainError {
  constructor(required?: readonly string[]) {
    super('AUTH.FORBIDDEN', {
      details: required ? `Requires the ${required.join(' or ')} staff role` : 'Staff tokens cannot call this endpoint',
    });
  }
}

/**
 * A staff member whose roles would allow the operation, signed in without the second factor those
 * roles need (RFC 9470): the challenge asks for a stronger sign-in, naming the `acr` values that
 * count when the service is told of any.
 */
export class MfaRequired extends DomainError {
  constructor(roles: readonly string[], acrValues: readonly string[]) {
    const parts = [REALM, 'error="insufficient_user_authentication"', 'error_description="A second factor is required"'];
    if (acrValues.length > 0) parts.push(`acr_values="${acrValues.join(' ')}"`);
    super('AUTH.MFA_REQUIRED', {
      details: `The ${roles.join(' and ')} role${roles.length === 1 ? '' : 's'} need${roles.length === 1 ? 's' : ''} a second factor: sign in again with it`,
      challenge: `Bearer ${parts.join(', ')}`,
    });
  }
}

export class RoleNotAllowed extends DomainError {
  constructor(required: readonly string[]) {
    super('AUTH.FORBIDDEN', {
      details: `Requires the ${required.join(' or ')} role`,
    });
  }
}

export class ApiClientNameTaken extends DomainError {
  constructor(name: string) {
    super('AUTH.CLIENT_NAME_TAKEN', `An active client named '${name}' already exists`);
  }
}

export class InvalidApiClient extends DomainError {
  constructor(message: string) {
    super('AUTH.INVALID_CLIENT', message);
  }
}

/** A request with no session, or one that has ended, expired or been logged out. */
export class SessionEnded extends DomainError {
  constructor(details = 'Log in again') {
    super('SESSION.ENDED', { details });
  }
}

/** A request with the session cookie but without the anti-forgery header, or from an origin not allowed. */
export class CsrfRejected extends DomainError {
  constructor(details: string) {
    super('SESSION.CSRF_REJECTED', { details });
  }
}

export class ReturnToRefused extends DomainError {
  constructor() {
    super('SESSION.RETURN_TO_REFUSED', { fields: [{ field: 'return_to', message: 'must be a path on this service or on an allowed origin' }] });
  }
}

/** The provider's callback could not complete a login: what failed, never a token or claim. */
export class LoginFailed extends DomainError {
  constructor(details: string, cause?: unknown) {
    super('SESSION.LOGIN_FAILED', { details, cause });
  }
}

export class InvalidLogoutToken extends DomainError {
  constructor(details: string, cause?: unknown) {
    super('SESSION.INVALID_LOGOUT_TOKEN', { details, cause });
  }
}

export class SessionsNotConfigured extends DomainError {
  constructor() {
    super('SESSION.NOT_CONFIGURED', { details: 'Set OIDC_ISSUER, OIDC_CLIENT_ID and its secret or key (docs/security.md, "Web apps")' });
  }
}
