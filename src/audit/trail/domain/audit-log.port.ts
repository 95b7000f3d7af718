import { AuditEvent } from './audit-event';
import { UnresolvedPage, UnresolvedQuery } from './unresolved-call';

/** The append-only store of audit events, as the trail writes it and reads its one rule from it. */
export abstract class AuditLog {
  /**
   * Resolves once the event is durably committed; rejects when it could not be written. The log
   * records when the event occurred itself (the database's clock, which the service may not set):
   * the event's `occurredAt` is the caller's reading, which the stored time may differ from.
   */
  abstract append(event: AuditEvent): Promise<void>;

  /** Mutating calls whose outcome is unknown (see UnresolvedCall), newest attempt first. */
  abstract unresolved(query: UnresolvedQuery): Promise<UnresolvedPage>;
}
