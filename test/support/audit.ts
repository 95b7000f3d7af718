import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
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

/**
 * What a superuser who wants the audit log's history gone would do: every checkpoint deleted (past
 * the tables' triggers), then an event dated an hour ago, left waiting to be sealed. The sealer
 * then stops (the chain it extends is gone) and lags (the event waits past any bound).
 */
export async function cutAuditChain(ownerUrl: string): Promise<void> {
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query('DELETE FROM audit_manifests; DELETE FROM audit_checkpoints');
    await client.query('COMMIT');
    await client.query(
      `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase) VALUES ($1, now() - interval '1 hour', 'late', 'balance.read', 'succeeded')`,
      [randomUUID()],
    );
  } finally {
    await client.end();
  }
}
