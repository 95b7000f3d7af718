import type { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from '../../trail/domain/audit-event';

/** The audit log as support searches it. */
export abstract class AuditSearch {
  /** Events matching every given filter, newest first, strictly after `after` when given. */
  abstract find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage>;

  abstract get(id: string): Promise<AuditEvent | undefined>;

  /** Who searched the audit log in [from, to) and was answered, and about which customers: at most `limit` rows of each. */
  abstract accessReport(from: Date, to: Date, limit: number): Promise<AccessReport>;
}

/** One person (a staff member, or an admin token) and their searches of the audit log in a period. */
export interface AccessByPerson {
  readonly callerKind: 'staff' | 'admin';
  /** The staff member's id, or the admin client's. */
  readonly id: string;
  readonly name?: string;
  readonly searches: number;
  /** Searches that gave a reason. */
  readonly withReason: number;
  /** Distinct customers and references they searched for. */
  readonly customers: number;
  readonly references: number;
  readonly firstAt: Date;
  readonly lastAt: Date;
}

/** One customer, and who searched the audit log about them in a period. */
export interface AccessByCustomer {
  readonly customerId: string;
  readonly searches: number;
  /** The people, by staff id or admin client id, most searches first. */
  readonly people: readonly { readonly callerKind: 'staff' | 'admin'; readonly id: string; readonly name?: string; readonly searches: number }[];
}

/** The quarterly access review's report (PCI DSS 7.2.4): who looked at what, by person and by customer. */
export interface AccessReport {
  /** More people or customers than the report lists searched or were searched for: ask for a shorter period. */
  readonly truncated: boolean;
  readonly people: readonly AccessByPerson[];
  readonly customers: readonly AccessByCustomer[];
}
