import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUuid } from '../../common/domain/identifiers';
import { GroupCommit } from '../../database/group-commit';
import { Sql } from '../../database/sql';
import { isRefusedData, unavailableOnOutage } from '../../database/store-errors';
import { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from '../domain/audit-event';
import { AuditLog } from '../domain/audit-log.port';
import { UnresolvedCall, UnresolvedPage, UnresolvedQuery } from '../domain/unresolved-call';
import { AuditEventEntity } from './audit-event.entity';
import { AuditEventMapper } from './audit-event.mapper';

/** occurred_at to the microsecond, so a page boundary never skips or repeats an event. */
const POSITION_SQL = `to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Attempts (newest first, on the phase index) whose own request ended neither `rejected` nor
 * `failed`, and whose reference never succeeded. Both look-ups go through the reference index: an
 * attempt's terminal event carries the same reference, and a reference has a handful of events.
 */
const UNRESOLVED_SQL = `
  SELECT e.id, ${POSITION_SQL} AS position, e.occurred_at, e.operation, e.reference, e.customer_id, e.client_id, e.client_name, e.request_id,
         u.error_id AS unknown_error_id, u.id IS NOT NULL AS ended_unknown
  FROM audit_events e
  LEFT JOIN LATERAL (
    SELECT t.id, t.error_id FROM audit_events t
    WHERE t.reference = e.reference AND t.request_id = e.request_id AND t.phase = 'unknown'
    LIMIT 1
  ) u ON true
  WHERE e.phase = 'attempted' AND e.reference IS NOT NULL
    AND e.occurred_at < $1
    AND ($2::timestamptz IS NULL OR e.occurred_at >= $2)
    AND ($3::uuid IS NULL OR e.reference = $3)
    AND ($4::varchar IS NULL OR e.request_id <> $4)
    AND ($5::timestamptz IS NULL OR (e.occurred_at, e.id) < ($5::timestamptz, $6::uuid))
    AND NOT EXISTS (
      SELECT 1 FROM audit_events t
      WHERE t.reference = e.reference AND t.request_id = e.request_id AND t.phase IN ('rejected', 'failed'))
    AND NOT EXISTS (SELECT 1 FROM audit_events s WHERE s.reference = e.reference AND s.phase = 'succeeded')
  ORDER BY e.occurred_at DESC, e.id DESC
  LIMIT $7`;

interface UnresolvedRow {
  id: string;
  position: string;
  occurred_at: Date;
  operation: UnresolvedCall['operation'];
  reference: string;
  customer_id: string | null;
  client_id: string | null;
  client_name: string | null;
  request_id: string;
  unknown_error_id: string | null;
  ended_unknown: boolean;
}

@Injectable()
export class TypeOrmAuditLogRepository extends AuditLog {
  /**
   * Events written at the same moment by concurrent requests share one INSERT and one commit; each
   * request still waits for its own event to be committed (see GroupCommit).
   */
  private readonly inserts = new GroupCommit<AuditEventEntity>((rows) => this.insertRows(rows), {
    maxBatch: 200,
    maxInFlight: 2,
    isRowError: isRefusedData,
  });

  /**
   * One statement for any number of events: each column arrives as one array parameter, cast to
   * the column's own type, and unnest turns the arrays back into rows. Built from the entity, so a
   * column added there is written here too.
   */
  private readonly insert: { sql: string; parameters: (rows: AuditEventEntity[]) => unknown[][] };

  constructor(
    @InjectRepository(AuditEventEntity) private readonly rows: Repository<AuditEventEntity>,
    private readonly sql: Sql,
  ) {
    super();
    // Not `tx`: the database sets it to the writing transaction (the seal order).
    const columns = rows.metadata.columns.filter((column) => column.isInsert);
    const names = columns.map((column) => `"${column.databaseName}"`).join(', ');
    const arrays = columns.map((column, i) => `$${i + 1}::${String(column.type)}[]`).join(', ');
    this.insert = {
      sql: `INSERT INTO audit_events (${names}) SELECT * FROM unnest(${arrays})`,
      parameters: (batch) => columns.map((column) => batch.map((row) => row[column.propertyName as keyof AuditEventEntity])),
    };
  }

  append(event: AuditEvent): Promise<void> {
    return this.inserts.write(AuditEventMapper.toRow(event));
  }

  private async insertRows(rows: AuditEventEntity[]): Promise<void> {
    await this.sql.query(this.insert.sql, this.insert.parameters(rows));
  }

  async find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage> {
    const query = this.rows.createQueryBuilder('e').addSelect(POSITION_SQL, 'position');
    if (filter.reference) query.andWhere('e.reference = :reference', { reference: filter.reference });
    if (filter.customerId) query.andWhere('e.customer_id = :customerId', { customerId: filter.customerId });
    if (filter.clientId) query.andWhere('e.client_id = :clientId', { clientId: filter.clientId });
    if (filter.operation) query.andWhere('e.operation = :operation', { operation: filter.operation });
    if (filter.phase) query.andWhere('e.phase = :phase', { phase: filter.phase });
    if (filter.from) query.andWhere('e.occurred_at >= :from', { from: filter.from });
    if (filter.to) query.andWhere('e.occurred_at < :to', { to: filter.to });
    if (filter.errorId) {
      if (isUuid(filter.errorId)) {
        query.andWhere('(e.error_id = :ourErrorId OR e.upstream_error_id = :errorId)', { ourErrorId: filter.errorId, errorId: filter.errorId });
      } else {
        query.andWhere('e.upstream_error_id = :errorId', { errorId: filter.errorId });
      }
    }
    if (after) {
      query.andWhere('(e.occurred_at, e.id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))', { afterAt: after.occurredAt, afterId: after.id });
    }
    query
      .orderBy('e.occurred_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .limit(limit + 1);

    const { entities, raw } = await unavailableOnOutage(() => query.getRawAndEntities<{ position: string }>());
    const events = entities.slice(0, limit).map((row) => AuditEventMapper.toDomain(row));
    if (entities.length <= limit) return { events };
    const last = entities[limit - 1];
    const lastRaw = raw[limit - 1];
    return { events, next: { occurredAt: lastRaw.position, id: last.id } };
  }

  async get(id: string): Promise<AuditEvent | undefined> {
    const row = await unavailableOnOutage(() => this.rows.findOneBy({ id }));
    return row ? AuditEventMapper.toDomain(row) : undefined;
  }

  async unresolved(query: UnresolvedQuery): Promise<UnresolvedPage> {
    const rows = await unavailableOnOutage(() =>
      this.sql.query<UnresolvedRow>(UNRESOLVED_SQL, [
        query.attemptedBefore,
        query.attemptedSince ?? null,
        query.reference ?? null,
        query.exceptRequestId ?? null,
        query.after?.occurredAt ?? null,
        query.after?.id ?? null,
        query.limit + 1,
      ]),
    );
    const calls = rows.slice(0, query.limit).map((row): UnresolvedCall => ({
      operation: row.operation,
      reference: row.reference,
      customerId: row.customer_id ?? undefined,
      clientId: row.client_id ?? undefined,
      clientName: row.client_name ?? undefined,
      attemptedAt: row.occurred_at,
      requestId: row.request_id,
      state: row.ended_unknown ? 'unknown' : 'no_outcome',
      errorId: row.unknown_error_id ?? undefined,
      position: { occurredAt: row.position, id: row.id },
    }));
    return rows.length > query.limit ? { calls, next: calls[calls.length - 1].position } : { calls };
  }
}
