/**
 * The outbox's write: a partner event inserted by the same statement as the fact it reports, from
 * the rows a data-modifying WITH query of that statement returned. Only a fact that was written
 * makes an event (a second record of an account changes nothing and says nothing), and the event
 * commits or rolls back with it. The table's trigger makes its fan-out due in the same transaction.
 *
 * `source` selects, per event: tenant, resource_id, request_id, reference, audit_event_id, data,
 * snapshot, and `sequence` (an expression over them), as text and jsonb.
 */
export function eventInsertSql(name: string, type: string, resourceType: string, source: string): string {
  return `${name} AS (
      INSERT INTO partner_events (id, tenant, type, resource_type, resource_id, sequence, request_id, reference, audit_event_id, data, snapshot)
      SELECT gen_random_uuid(), s.tenant, '${type}', '${resourceType}', s.resource_id, s.sequence, s.request_id, s.reference::uuid,
             s.audit_event_id::uuid, s.data, s.snapshot
      FROM (${source}) s)`;
}

/** The next sequence number of a resource's events (1 for its first). */
export const nextSequenceSql = (resourceType: string, resourceId: string): string =>
  `(SELECT coalesce(max(e.sequence), 0) + 1 FROM partner_events e WHERE e.resource_type = '${resourceType}' AND e.resource_id = ${resourceId})`;
