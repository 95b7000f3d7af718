import { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from './audit-event';
import { UnresolvedPage, UnresolvedQuery } from './unresolved-call';

/** The append-only store of audit events. */
export abstract class AuditLog {
  /** Resolves once the event is durably committed; rejects when it could not be written. */
  abstract append(event: AuditEvent): Promise<void>;

  /** Events matching every given filter, newest first, strictly after `after` when given. */
  abstract find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage>;

  abstract get(id: string): Promise<AuditEvent | undefined>;

  /** Mutating calls whose outcome is unknown (see UnresolvedCall), newest attempt first. */
  abstract unresolved(query: UnresolvedQuery): Promise<UnresolvedPage>;
}
