import type { AuditOperation } from '../../../common/domain/audit-operations';
import type { CallerKind, RequestSubject } from '../../../common/domain/request-record';
import type { UpstreamAttempt, UpstreamFacts } from '../../../common/domain/upstream';

/** `attempted` precedes a mutating provider call; the others end a request. */
export const AUDIT_PHASES = ['attempted', 'succeeded', 'rejected', 'failed', 'unknown'] as const;
export type AuditPhase = (typeof AUDIT_PHASES)[number];
export type TerminalPhase = Exclude<AuditPhase, 'attempted'>;

export interface AuditActor {
  /**
   * partner or admin (a client token), end_user (an access token: clientId is then their
   * pseudonym), staff (the company's provider: staffId and clientName name them).
   */
  readonly callerKind?: CallerKind;
  readonly clientId?: string;
  readonly clientName?: string;
  readonly tenant?: string;
  readonly sourceIp?: string;
  /** A staff member's stable id at the company's provider. */
  readonly staffId?: string;
  /** The roles a staff member's request was allowed with. */
  readonly staffRoles?: readonly string[];
  /** Why a staff member or an admin looked, as their search said. */
  readonly accessReason?: string;
  /** Made with an admin client token: the break-glass credential. */
  readonly breakGlass?: boolean;
}

/** What is known of the provider call (UpstreamFacts), as the event's own columns: upstreamStatus, upstreamErrorId, upstreamLatencyMs. */
export type UpstreamCallFacts = { readonly [K in keyof UpstreamFacts as `upstream${Capitalize<K>}`]?: UpstreamFacts[K] };

/** One row of the audit log (PCI DSS 10.2.2: who, what, when, outcome, origin, resource). */
export interface AuditEvent extends RequestSubject, AuditActor, UpstreamCallFacts {
  readonly id: string;
  readonly occurredAt: Date;
  readonly requestId: string;
  readonly operation: AuditOperation;
  readonly phase: AuditPhase;
  readonly httpMethod?: string;
  readonly route?: string;
  readonly httpStatus?: number;
  /** The service's error id, as shown to the partner in `error.id`. */
  readonly errorId?: string;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly latencyMs?: number;
  /** Served from the idempotency store: the provider was not called. */
  readonly replayed?: boolean;
  /** The request's W3C trace id, when its trace was sampled: where to find the trace (docs/operations.md). */
  readonly traceId?: string;
  /** Each provider attempt, when the call was tried more than once (the last one is also upstreamStatus and upstreamErrorId). */
  readonly upstreamAttempts?: readonly UpstreamAttempt[];
}

export interface AuditEventFilter {
  readonly reference?: string;
  /** Matches the service's error id or the provider's. */
  readonly errorId?: string;
  readonly customerId?: string;
  readonly operation?: AuditOperation;
  readonly phase?: AuditPhase;
  readonly clientId?: string;
  /** A staff member's stable id. */
  readonly staffId?: string;
  /** Inclusive. */
  readonly from?: Date;
  /** Exclusive. */
  readonly to?: Date;
}

/** Where a page ends, in the newest-first order: the last event's time (as stored) and id. */
export interface AuditPosition {
  readonly occurredAt: string;
  readonly id: string;
}

export interface AuditPage {
  readonly events: readonly AuditEvent[];
  /** Present when older events remain. */
  readonly next?: AuditPosition;
}
