import { AuditEvent } from './audit-event';
import { UnresolvedPage, UnresolvedQuery } from './unresolved-call';

/**
 * A row of another store's write that an event rides with (AuditLog.appendAlong, appendWith). `sql` is
 * one data-modifying statement over array parameters ($1 to $n, one array per field, one element
 * per row) that returns `key` for each row it wrote; `values` are this row's n fields; `key` is the
 * key the statement returns when it writes this row.
 */
export interface StoreWrite {
  readonly sql: string;
  readonly values: readonly unknown[];
  readonly key: string;
}

/**
 * An event as the log committed it, as a receipt names it (docs/security.md, "Receipts"): its
 * columns as stored, the time the log recorded, and its hash as the seal computes it.
 */
export interface CommittedEvent {
  readonly eventId: string;
  readonly eventHash: Buffer;
  /** ISO 8601 to the microsecond, UTC: the stored time, not the service's reading. */
  readonly occurredAt: string;
  readonly requestId: string;
  readonly operation: string;
  /** The event's phase: succeeded, rejected, failed or unknown. */
  readonly outcome: string;
  readonly httpStatus: number | null;
  readonly reference: string | null;
  readonly customerId: string | null;
}

/** The append-only store of audit events, as the trail writes it and reads its one rule from it. */
export abstract class AuditLog {
  /**
   * Resolves once the event is durably committed; rejects when it could not be written. The log
   * records when the event occurred itself (the database's clock, which the service may not set):
   * the event's `occurredAt` is the caller's reading, which the stored time may differ from.
   */
  abstract append(event: AuditEvent): Promise<void>;

  /**
   * Writes the row and appends `event` in the same statement, the event only when the write wrote
   * its row: both are committed, or neither. Resolves to whether it did. Rows written at the same
   * moment share one statement and one commit, as appended events do. This is how the write-ahead
   * event of a provider write commits with its idempotency claim.
   */
  abstract appendAlong(event: AuditEvent, write: StoreWrite): Promise<boolean>;

  /**
   * Writes the row and appends `event` in the same statement, the event whether or not the write
   * found its row: both are committed, or neither. Resolves to whether the write wrote its row, and
   * the event as committed (what its receipt names, read in the same statement). Grouped as
   * appendAlong is. This is how a request's terminal event commits with the idempotency store's
   * result (or release) of its provider write.
   * @throws DatabaseUnavailable when the database does not answer: nothing was written.
   */
  abstract appendWith(event: AuditEvent, write: StoreWrite): Promise<{ written: boolean; committed?: CommittedEvent }>;

  /** Mutating calls whose outcome is unknown (see UnresolvedCall), newest attempt first. */
  abstract unresolved(query: UnresolvedQuery): Promise<UnresolvedPage>;
}
