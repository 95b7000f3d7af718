import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Recognisable prefix so secret scanners and humans can tell a gateway token at a glance. */
export const TOKEN_PREFIX = 'pgw_';
const TOKEN_BYTES = 32; // 256 bits

export function generateClientToken(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString('base64url');
}

export function hashClientToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
