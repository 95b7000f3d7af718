import { createHash } from 'node:crypto';
import type { JWK } from 'jose';

/** The members of each key type a thumbprint covers (RFC 7638 section 3.2), in the order it takes them. */
const THUMBPRINT_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };

/**
 * A public JWK's required members (RFC 7638 section 3.2), those and no others, in lexicographic
 * order: what its thumbprint covers (and all a caller needs to import the key). Undefined for a key
 * type this does not know or a member that is not a string.
 */
export function requiredMembersOf(jwk: JWK): Record<string, string> | undefined {
  const members = typeof jwk.kty === 'string' ? THUMBPRINT_MEMBERS[jwk.kty] : undefined;
  if (!members) return undefined;
  const required: Record<string, string> = {};
  for (const member of members) {
    const value = (jwk as Record<string, unknown>)[member];
    if (typeof value !== 'string') return undefined;
    required[member] = value;
  }
  return required;
}

/** The SHA-256 of required members as `requiredMembersOf` returns them, serialised without whitespace (RFC 7638 section 3). */
export function thumbprintOfMembers(required: Record<string, string>): string {
  return createHash('sha256').update(JSON.stringify(required), 'utf8').digest('base64url');
}

/**
 * A public JWK's SHA-256 thumbprint (RFC 7638), as jose's calculateJwkThumbprint computes it, with
 * node:crypto's hash: it may run per request, and the Web Crypto digest costs ten times more.
 * Undefined for a key type this does not know or a member that is not a string.
 */
export function thumbprintOf(jwk: JWK): string | undefined {
  const required = requiredMembersOf(jwk);
  return required && thumbprintOfMembers(required);
}
