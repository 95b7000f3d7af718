import { EventDigestRow, SealPosition, SettledBatch, SignedCheckpoint } from './audit-seal';
import { ReceiptClaims } from './receipt';
import type { CommittedEvent } from '../../trail/domain/audit-log.port';

/** A stored checkpoint with the columns kept beside its statement for queries (verify trusts the statement). */
export interface StoredCheckpoint extends SignedCheckpoint {
  readonly kind: string;
  readonly end: SealPosition;
}

/** What the sealer and the purge do while they hold the seal lock, in one transaction. */
export interface SealScope {
  newestCheckpoint(): Promise<StoredCheckpoint | undefined>;
  /**
   * Events after `after` in seal order, at most `limit`, written by transactions that have all
   * ended, as have all transactions before them: nothing can ever be committed behind them.
   * Undefined when there are none.
   */
  settledEventsAfter(after: SealPosition, limit: number): Promise<SettledBatch | undefined>;
  /** The log's tree as it stands: how many checkpoint heads it holds, and its RFC 9162 head (hex). */
  logTree(): Promise<{ size: number; root: string }>;
  /** Appends a checkpoint (and, for a seal, its manifest): the store takes its columns from the signed statement. */
  append(checkpoint: SignedCheckpoint, manifest?: Buffer): Promise<void>;
  /**
   * Removes the oldest checkpoints whose events are all older than `cutoff`, with their events and
   * manifests, up to about `maxEvents` events (always whole checkpoints). Undefined when none can go.
   */
  purgeSealed(cutoff: Date, maxEvents: number): Promise<{ throughSeq: number; throughHead: string; purged: number } | undefined>;
}

/** The sealed log's store. */
export abstract class AuditSealStore {
  /**
   * Runs `work` in one transaction holding the seal lock, so that one process at a time extends
   * the chain. `wait: false` returns undefined at once when another process holds it.
   */
  abstract underSealLock<T>(wait: boolean, work: (scope: SealScope) => Promise<T>): Promise<T | undefined>;

  /** Newest first. */
  abstract newestCheckpoints(limit: number): Promise<StoredCheckpoint[]>;

  /** Checkpoints with seq above `afterSeq`, oldest first, at most `limit`; optionally only those whose events touch [from, to). */
  abstract checkpointsAfter(afterSeq: number, limit: number, window?: { from?: Date; to?: Date }): Promise<StoredCheckpoint[]>;

  /** Every purge checkpoint (there are few). */
  abstract purgeCheckpoints(): Promise<StoredCheckpoint[]>;

  abstract manifest(seq: number): Promise<Buffer | undefined>;

  /**
   * One round trip per checkpoint: how many events lie in (after, through], the SHA-256 of their
   * manifest as it would be sealed now, and that of checkpoint `seq`'s stored manifest (undefined
   * when there is none).
   */
  abstract rangeDigest(seq: number, after: SealPosition, through: SealPosition): Promise<{ count: number; digest: string; manifestDigest?: string }>;

  /** Events in (after, through] in seal order, a page at a time. */
  abstract eventsBetween(after: SealPosition, through: SealPosition, pageSize: number): AsyncIterable<EventDigestRow[]>;

  /** Events at or before `position`, at most `limit` (verify: none may be there). */
  abstract eventsUpTo(position: SealPosition, limit: number): Promise<EventDigestRow[]>;

  /** How many events lie after `position`, and the oldest of them. */
  abstract eventsAfter(position: SealPosition): Promise<{ count: number; oldest: Date | null }>;

  /**
   * In one cheap round trip (an index range of one row): the newest checkpoint's number and time,
   * and when the next event after it in seal order occurred (the one waiting longest to be sealed).
   */
  abstract progress(): Promise<{ newest: { seq: number; sealedAt: Date } | null; nextUnsealedAt: Date | null }>;

  /**
   * A partner's event (one of `tenant`'s partner or end-user requests) and the seal checkpoint whose
   * range holds it, with that checkpoint's manifest: undefined when the tenant has no such event;
   * `checkpoint` undefined while the event is not sealed yet.
   */
  abstract sealedEvent(tenant: string, eventId: string): Promise<{ position: SealPosition; checkpoint?: StoredCheckpoint & { manifest: Buffer } } | undefined>;

  /** Checkpoint `seq`; undefined when there is none (not written yet, or purged). */
  abstract checkpoint(seq: number): Promise<StoredCheckpoint | undefined>;

  /** The log's tree: the stored nodes of these leaves, by leaf index (see log-tree.ts). */
  abstract logTreeNodes(leaves: readonly number[]): Promise<ReadonlyMap<number, Buffer>>;

  /** How many leaves the stored tree of the log holds (its highest leaf, plus one). */
  abstract logTreeSize(): Promise<number>;

  /** A committed event as its receipt names it, its hash computed as the seal computes it; undefined when the log holds no such event. */
  abstract receiptFacts(eventId: string): Promise<CommittedEvent | undefined>;

  /**
   * The request whose outcome an idempotent replay repeats: `tenant`'s newest success of `operation`
   * with `reference` that was not itself a replay and was answered with a 2xx (the result the
   * idempotency store keeps is that success's; one held during an outage was answered 503).
   * Undefined when there is none.
   */
  abstract originalSuccess(tenant: string, reference: string, operation: string): Promise<CommittedEvent | undefined>;
}

/** Signs checkpoints with the service's audit key. */
export abstract class CheckpointSigner {
  abstract readonly keyId: string;
  /** Base64 Ed25519 signature of the statement text. */
  abstract sign(statement: string): string;
  /** A receipt: a compact JWS (RFC 7515) over the claims, with the same key, `kid` its key id. */
  abstract signReceipt(claims: ReceiptClaims): Promise<string>;
}

/** The public keys verify trusts: the signing key's own and any retired ones. */
export abstract class TrustedKeys {
  /** Undefined when no trusted key has this id. */
  abstract verify(keyId: string, statement: string, signature: string): boolean | undefined;
  abstract readonly keyIds: readonly string[];
  /** Every trusted public key as a JSON Web Key (RFC 8037: OKP, Ed25519), `kid` its key id: what partners pin to check receipts and checkpoints. */
  abstract publicJwks(): readonly Record<string, string>[];
}
