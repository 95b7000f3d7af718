import { Claim, IdempotencyKey } from './idempotency';

export interface ClaimRequest {
  readonly key: IdempotencyKey;
  readonly operation: string;
  readonly fingerprint: string;
  readonly now: Date;
  /** A claim still in flight after this is presumed abandoned (a crashed replica) and may be taken over. */
  readonly lockedUntil: Date;
  readonly expiresAt: Date;
}

/** Reference-keyed replay store, shared by every replica. */
export abstract class IdempotencyStore {
  /**
   * Atomically claims the key for this request: `claimed` when it is new, expired, released, or
   * abandoned with the same fingerprint; otherwise what holds it. Of concurrent claims, exactly one
   * wins.
   */
  abstract claim(request: ClaimRequest): Promise<Claim>;

  /** Stores the result to replay. */
  abstract complete(key: IdempotencyKey, result: unknown): Promise<void>;

  /** The attempt ended without a result to replay: a retry with the same body may claim it again. */
  abstract release(key: IdempotencyKey): Promise<void>;

  /** Deletes keys past their expiry; returns how many. */
  abstract purgeExpired(now: Date): Promise<number>;
}
