import type { AuditEvent, AuditPosition } from '../../trail/domain/audit-event';
import type { AuditOperation } from '../../../common/domain/audit-operations';

/** What a partner may filter its own requests by; every filter but `tenant` optional, all of them combined. */
export interface RequestLogFilter {
  /** The partner's tenant: nobody sees another's requests. */
  readonly tenant: string;
  /** Inclusive. */
  readonly from?: Date;
  /** Exclusive. */
  readonly to?: Date;
  readonly status?: number;
  /** 2, 3, 4 or 5: the status's first digit. */
  readonly statusClass?: number;
  readonly operation?: AuditOperation;
  readonly errorCode?: string;
  /** The service's `error.id`, or the provider's error id. */
  readonly errorId?: string;
  readonly reference?: string;
  readonly customerId?: string;
}

/** A page of a partner's requests, newest first: each its last event (the terminal one, or `attempted` when none followed). */
export interface RequestLogPage {
  readonly requests: readonly AuditEvent[];
  /** Present when older requests remain. */
  readonly next?: AuditPosition;
}

/** Another request that a request's timeline points to. */
export interface RelatedRequest {
  readonly requestId: string;
  readonly occurredAt: Date;
}

/** One request, whole: its events in order, what it replayed, and what settled it when its outcome was unknown. */
export interface RequestTimeline {
  /** Oldest first. */
  readonly events: readonly AuditEvent[];
  /** The request whose answer an idempotent replay gave back (its `attempted` event). */
  readonly replayOf?: RelatedRequest;
  /** A later request with the same reference and operation that succeeded, when this one's outcome was unknown or never recorded. */
  readonly settledBy?: RelatedRequest;
}

/** The audit log as partners read their own requests (a tenant's, partner and end-user callers only). */
export abstract class RequestLogStore {
  /** The tenant's requests matching every filter, newest first, strictly after `after` when given. */
  abstract list(filter: RequestLogFilter, limit: number, after?: AuditPosition): Promise<RequestLogPage>;

  /** The events of the tenant's request with this id (at most `limit`), with what they point to; undefined when it has none. */
  abstract timeline(tenant: string, requestId: string, limit: number): Promise<RequestTimeline | undefined>;
}
