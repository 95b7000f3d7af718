import type { Transaction } from '../../../common/domain/unit-of-work.port';
import { AuditEvent } from './audit-event';
import { UnresolvedPage, UnresolvedQuery } from './unresolved-call';

/** The append-only store of audit events, as the trail writes it and reads its one rule from it. */
export abstract class AuditLog {
  /**
   * Resolves once the event is durably committed; rejects when it could not be written. The log
   * records when the event occurred itself (the database's clock, which the service may not set):
   * the event's `occurredAt` is the caller's reading, which the stored time may differ from.
   * In `tx`, when given, the event is written in it and commits with it (not grouped with other
   * requests' events).
   */
  abstract append(event: AuditEvent, tx?: Transaction): Promise<void>;

  /** Mutating calls whose outcome is unknown (see UnresolvedCall), newest attempt first. */
  abstract unresolved(query: UnresolvedQuery): Promise<UnresolvedPage>;
}
