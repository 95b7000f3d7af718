import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import type { CommittedEvent } from '../../audit/trail/domain/audit-log.port';
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

/** A claim a request won: its key, and when it claimed it (which tells it from a later claim of the same reference). */
export interface OwnClaim {
  readonly key: IdempotencyKey;
  readonly claimedAt: Date;
}

/** A completed write whose result the store still keeps (IdempotencyStore.keptWrites): whose it is, and when. */
export interface KeptWrite {
  readonly reference: string;
  readonly createdAt: Date;
  /** The client that made it: an API client's id, or an end user's pseudonym. */
  readonly clientId: string;
}

/** A kept result, opened; `unreadable` when it does not open (sealed under a key the service no longer has). */
export type KeptResult = { readonly result: unknown } | { readonly unreadable: true };

/** Reference-keyed replay store, shared by every replica. */
export abstract class IdempotencyStore {
  /**
   * Atomically claims the key for this request: `claimed` when it is new, expired, released, or
   * abandoned with the same fingerprint; otherwise what holds it. Of concurrent claims, exactly one
   * wins. With `attempted`, that event is appended to the audit log in the same commit as the
   * claim, and only when the claim is `claimed`: both are committed or neither, so a claim never
   * outlives a write-ahead event that could not be written.
   */
  abstract claim(request: ClaimRequest, attempted?: AuditEvent): Promise<Claim>;

  /**
   * Stores the result to replay (whichever attempt at the reference stores it: the provider's
   * answer to the reference is the answer). With `concluded`, the request's terminal event is
   * appended in the same commit: both are written, or neither.
   */
  abstract complete(claim: OwnClaim, result: unknown, concluded?: AuditEvent): Promise<CommittedEvent | undefined>;

  /**
   * The attempt ended without a result to replay: a retry with the same body may claim it at once.
   * Only this claim is released (not a later one of the same reference), and only while in flight.
   * With `concluded`, as for complete.
   */
  abstract release(claim: OwnClaim, concluded?: AuditEvent): Promise<CommittedEvent | undefined>;

  /** One operation's completed writes whose results are still kept, oldest first, but those of `except` (references): nothing opened. */
  abstract keptWrites(operation: string, except: (references: string[]) => Promise<Set<string>>): Promise<KeptWrite[]>;

  /** A kept result, opened; undefined when the reference has none (any more). */
  abstract keptResult(reference: string): Promise<KeptResult | undefined>;

  /** Deletes keys past their expiry; returns how many. */
  abstract purgeExpired(now: Date): Promise<number>;
}
