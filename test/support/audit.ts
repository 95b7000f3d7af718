import { DataSource } from 'typeorm';

/** A row of audit_events exactly as stored, every column. */
export type AuditRow = Record<string, unknown> & {
  id: string;
  request_id: string;
  operation: string;
  phase: string;
  http_status: number | null;
  error_id: string | null;
  occurred_at: Date;
};

/** The events of one request, oldest first. */
export async function auditEventsOf(dataSource: DataSource, requestId: string): Promise<AuditRow[]> {
  return dataSource.query('SELECT * FROM audit_events WHERE request_id = $1 ORDER BY occurred_at, phase', [requestId]);
}

/** Every column of every event, as one string: for "this value is stored nowhere" checks. */
export async function wholeAuditLog(dataSource: DataSource): Promise<string> {
  const rows: { line: string }[] = await dataSource.query('SELECT row_to_json(e)::text AS line FROM audit_events e');
  return rows.map((r) => r.line).join('\n');
}
