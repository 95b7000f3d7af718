import type { AuditOperation } from '../../../common/domain/audit-operations';
import type { AuditPosition } from './audit-event';

/**
 * A mutating call whose outcome at the provider nobody knows: its `attempted` event was committed
 * (so it may have been sent), and then either
 * - `no_outcome`: no terminal event followed — the process ended between the two (a crash, a kill);
 * - `unknown`: its terminal event says so — the provider did not answer in time, or the connection
 *   was lost after sending.
 * A later success for the same reference settles it, so such a call is not unresolved.
 */
export interface UnresolvedCall {
  readonly operation: AuditOperation;
  readonly reference: string;
  /** The account's customer; absent for a customer creation (its id is what was lost). */
  readonly customerId?: string;
  readonly clientId?: string;
  readonly clientName?: string;
  readonly attemptedAt: Date;
  readonly requestId: string;
  readonly state: 'no_outcome' | 'unknown';
  /** The `error.id` the partner was given, when the call ended `unknown`. */
  readonly errorId?: string;
  /** Where this call sits in the newest-first order (its `attempted` event). */
  readonly position: AuditPosition;
}

export interface UnresolvedQuery {
  /** Only calls attempted before this: younger ones may still be running. */
  readonly attemptedBefore: Date;
  /** Only calls attempted at or after this. */
  readonly attemptedSince?: Date;
  readonly reference?: string;
  /** Leaves out this request's own attempt (the one asking). */
  readonly exceptRequestId?: string;
  readonly limit: number;
  /** Strictly older than this position. */
  readonly after?: AuditPosition;
}

export interface UnresolvedPage {
  readonly calls: readonly UnresolvedCall[];
  /** Present when older unresolved calls remain. */
  readonly next?: AuditPosition;
}
