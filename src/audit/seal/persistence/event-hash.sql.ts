import type { CommittedEvent } from '../../trail/domain/audit-log.port';

/*
 * An event's hash, as SQL over `audit_events e`: what the sealer seals and verify recomputes (the
 * seal's store), and what a write's terminal event answers as it is inserted (the trail's
 * repository, for its receipt). One definition, so that a receipt names the hash the seal will.
 */

/**
 * The columns of an event that its hash covers, in order. Every column
 * but `tx` (its place in seal order, which the manifest holds): a test keeps this list and the
 * table in step, so a column added later cannot stay outside the seal unnoticed.
 */
// prettier-ignore
export const SEALED_COLUMNS_V1 = [
  'id', 'occurred_at', 'request_id', 'client_id', 'client_name', 'tenant', 'operation', 'phase', 'http_method', 'route',
  'reference', 'customer_id', 'currency', 'http_status', 'upstream_status', 'error_id', 'error_code', 'upstream_error_id',
  'error_message', 'latency_ms', 'upstream_latency_ms', 'source_ip', 'replayed',
] as const;

/**
 * The columns added since the first seal (migration EndUsers1764316800000). An event where they are
 * all null hashes as before, so that events sealed earlier keep their hashes; any other event's
 * hash covers them too. Setting them to null changes an event's hash like any other change.
 */
export const SEALED_COLUMNS_V2 = ['caller_kind'] as const;

/** Added by AuditTraceIds1764489600000, on the same terms as V2: an event with no trace id hashes as before. */
export const SEALED_COLUMNS_V3 = ['trace_id'] as const;

/** Added by StaffAccess1764748800000, on the same terms: an event with none of them hashes as before. */
export const SEALED_COLUMNS_V4 = ['staff_id', 'staff_roles', 'access_reason', 'break_glass'] as const;

/** Added by RequestLogs1764835200000, on the same terms: an event whose call was made once hashes as before. */
export const SEALED_COLUMNS_V5 = ['upstream_attempts'] as const;

/** The columns each version added, oldest first. */
const SEALED_VERSIONS: readonly (readonly string[])[] = [SEALED_COLUMNS_V1, SEALED_COLUMNS_V2, SEALED_COLUMNS_V3, SEALED_COLUMNS_V4, SEALED_COLUMNS_V5];

export const SEALED_COLUMNS = SEALED_VERSIONS.flat();

const rowOf = (columns: readonly string[]) => `pg_catalog.record_send(ROW(${columns.map((column) => `e.${column}`).join(', ')}))`;

/**
 * An event's hash: SHA-256 of the binary form of its sealed columns (`record_send` of the row, the
 * wire protocol's binary format: each column's type and bytes, times as microseconds in UTC), so
 * that no session setting changes it. Computed by PostgreSQL's own functions, schema-qualified so
 * that no function of another schema can stand in: five times cheaper than any text form, and the
 * rows never need to leave the server for verify to check them. An event whose columns of every
 * later version are null hashes as the version it fits (the oldest first), so an event sealed
 * before a column was added keeps its hash.
 */
const allNull = (columns: readonly string[]) => columns.map((column) => `e.${column} IS NULL`).join(' AND ');
export const EVENT_HASH = `pg_catalog.sha256(CASE
  ${SEALED_VERSIONS.slice(0, -1)
    .map((_, version) => `WHEN ${allNull(SEALED_VERSIONS.slice(version + 1).flat())} THEN ${rowOf(SEALED_VERSIONS.slice(0, version + 1).flat())}`)
    .join('\n  ')}
  ELSE ${rowOf(SEALED_COLUMNS)} END)`;

/** A timestamp as ISO 8601 text, to the microsecond, UTC. */
export const isoUsOf = (expression: string): string => `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export const ISO_US = isoUsOf('e.occurred_at');

/** An event as its receipt names it. */
export const RECEIPT_COLUMNS = `e.id, ${EVENT_HASH} AS hash, ${ISO_US} AS occurred_at, e.request_id, e.operation, e.phase, e.http_status, e.reference, e.customer_id`;

export interface ReceiptRow {
  id: string;
  hash: Buffer;
  occurred_at: string;
  request_id: string;
  operation: string;
  phase: string;
  http_status: number | null;
  reference: string | null;
  customer_id: string | null;
}

export function toCommittedEvent(row: ReceiptRow): CommittedEvent {
  return {
    eventId: row.id,
    eventHash: row.hash,
    occurredAt: row.occurred_at,
    requestId: row.request_id,
    operation: row.operation,
    outcome: row.phase,
    httpStatus: row.http_status,
    reference: row.reference,
    customerId: row.customer_id,
  };
}
