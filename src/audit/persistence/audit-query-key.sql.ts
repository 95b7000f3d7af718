import { OPERATION } from '../../common/domain/audit-operations';

/**
 * Whether an event (as `alias`) is a search of the audit log: the second key of the reference and
 * customer indexes (AuditSearchesApart1765094400000). A search is audited under the reference or
 * customer it looked at, so a much-searched reference gathers such events. A read by reference or
 * customer that adds `(e.operation = 'audit.query') IS FALSE` (or `IS TRUE`) walks only the events
 * it wants, in time order; one that leaves it out reads every search about them too, and loses the
 * index's time order. The text must stay the index's expression: medium tests hold the readers'
 * plans to the index. (`NOT (…)` would not do: PostgreSQL rewrites it as `<>`, which no longer
 * matches the index.)
 */
export function isAuditQuery(alias = 'e'): string {
  return `(${alias}.operation = '${OPERATION.queryAudit}')`;
}

/** The key's condition for a read by reference or customer that asks for `operation` (or for none): the searches of the audit log only when it asks for them. */
export function auditQueryKeyFor(operation: string | undefined): string {
  return `${isAuditQuery()} IS ${operation === OPERATION.queryAudit ? 'TRUE' : 'FALSE'}`;
}
