import { createHash } from 'node:crypto';

export interface IdempotencyKey {
  readonly clientId: string;
  readonly reference: string;
}

/** What the store knows of a key when a request claims it. */
export type Claim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'completed'; readonly result: unknown }
  /** Claimed by another request, which has not ended (or whose end is not recorded yet), since `since`. */
  | { readonly kind: 'in_flight'; readonly since: Date }
  | { readonly kind: 'mismatch' }
  /** Another client owns this reference. */
  | { readonly kind: 'taken' };

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * SHA-256 of the operation and the body without its reference, keys sorted: the same request
 * retried — with the reference the gateway generated for it, or with key order changed — matches.
 */
export function fingerprintOf(operation: string, body: Record<string, unknown>): string {
  const { reference: _reference, ...rest } = body;
  return createHash('sha256')
    .update(JSON.stringify([operation, canonical(rest)]))
    .digest('hex');
}
