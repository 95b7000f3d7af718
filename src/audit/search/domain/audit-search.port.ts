import { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from '../../trail/domain/audit-event';

/** The audit log as support searches it. */
export abstract class AuditSearch {
  /** Events matching every given filter, newest first, strictly after `after` when given. */
  abstract find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage>;

  abstract get(id: string): Promise<AuditEvent | undefined>;
}
