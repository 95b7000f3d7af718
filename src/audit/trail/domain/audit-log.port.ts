import { AuditEvent } from './audit-event';
import { UnresolvedPage, UnresolvedQuery } from './unresolved-call';

/** The append-only store of audit events, as the trail writes it and reads its one rule from it. */
export abstract class AuditLog {
  /** Resolves once the event is durably committed; rejects when it could not be written. */
  abstract append(event: AuditEvent): Promise<void>;

  /** Mutating calls whose outcome is unknown (see UnresolvedCall), newest attempt first. */
  abstract unresolved(query: UnresolvedQuery): Promise<UnresolvedPage>;
}
