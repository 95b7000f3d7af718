import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUuid } from '../../../common/domain/identifiers';
import { OPERATION } from '../../../common/domain/audit-operations';
import { unavailableOnOutage } from '../../../database/store-errors';
import type { AuditEvent, AuditPosition } from '../../trail/domain/audit-event';
import { AuditEventEntity } from '../../trail/persistence/audit-event.entity';
import { auditQueryKeyFor, isAuditQuery } from '../../persistence/audit-query-key.sql';
import { AuditEventMapper } from '../../trail/persistence/audit-event.mapper';
import { POSITION_SQL } from '../../trail/persistence/postgres-audit-log.repository';
import { RelatedRequest, RequestLogFilter, RequestLogPage, RequestLogStore, RequestTimeline } from '../domain/request-log.port';

const LOG_READS = [OPERATION.listRequests, OPERATION.readRequest, OPERATION.readReceiptProof, OPERATION.readConsistencyProof];

/**
 * How many events one page reads at most, of the tenant's, or of the reference's or customer's it
 * is filtered by: about 13 ms of the database's time for a page that reads all of them, at ten
 * million events (docs/benchmarks.md, "The audit log at scale: the request log"), whatever the
 * filters (only an error id, one request's, is looked up unbounded).
 */
export const SCAN_PER_PAGE = 2000;

/** A row of audit_events as the list's SQL returns it: its columns and its position. */
type RawRow = Record<string, unknown> & { id: string; position: string };

/** The callers whose requests a partner's log holds: its servers and its end users (never staff, nor an admin's break-glass token). */
const PARTNER_CALLERS = `e.caller_kind IN ('partner', 'end_user')`;

/**
 * A request's last event: its terminal one, or its `attempted` one when no terminal event of the
 * same request followed (still at work, or the gateway stopped before it learned the provider's
 * answer). The same request: its id, tenant, reference and operation, later; a caller that reused
 * its X-Request-Id for another request does not hide this one.
 */
const LAST_EVENT = `(e.phase <> 'attempted' OR NOT EXISTS (
  SELECT 1 FROM audit_events t
   WHERE t.request_id = e.request_id AND t.tenant = e.tenant AND t.phase <> 'attempted'
     AND t.reference IS NOT DISTINCT FROM e.reference AND t.operation = e.operation AND t.occurred_at >= e.occurred_at))`;

interface RelatedRow {
  request_id: string;
  occurred_at: Date;
}

/** A partner's requests over audit_events: the tenant's index, newest first, keyset pages; one request by the request id's index. */
@Injectable()
export class PostgresRequestLogRepository extends RequestLogStore {
  constructor(@InjectRepository(AuditEventEntity) private readonly rows: Repository<AuditEventEntity>) {
    super();
  }

  async list(filter: RequestLogFilter, limit: number, after?: AuditPosition): Promise<RequestLogPage> {
    const parameters: unknown[] = [];
    const bind = (value: unknown) => `$${parameters.push(value)}`;
    // A reference or a customer has an index of its own, read in time order past the searches of the
    // audit log about it (its second key); otherwise the tenant's index is read.
    const subject = filter.reference ? `e.reference = ` : filter.customerId ? `e.customer_id = ` : undefined;
    const subjectValue = filter.reference ?? filter.customerId;
    // What one page reads, newest first, older than the cursor: the conditions of the index read alone,
    // so that a stretch of SCAN_PER_PAGE events of it is as long whatever else they hold (another
    // tenant's events about the same customer included).
    const windowOf = (bound: (value: unknown) => string) => {
      const window = subject
        ? [`${subject}${bound(subjectValue)}`, auditQueryKeyFor(filter.operation)]
        : [`e.tenant = ${bound(filter.tenant)}`, PARTNER_CALLERS];
      if (filter.from) window.push(`e.occurred_at >= ${bound(filter.from)}`);
      if (filter.to) window.push(`e.occurred_at < ${bound(filter.to)}`);
      if (after) window.push(`(e.occurred_at, e.id) < (${bound(after.occurredAt)}::timestamptz, ${bound(after.id)}::uuid)`);
      return window;
    };
    const window = windowOf(bind);
    // What the partner asked for: its own requests, each once (its last event), as the filters say.
    const wanted = subject ? [`e.tenant = ${bind(filter.tenant)}`, PARTNER_CALLERS, LAST_EVENT] : [LAST_EVENT];
    if (filter.reference && filter.customerId) wanted.push(`e.customer_id = ${bind(filter.customerId)}`);
    // Reading the log leaves events too: listed only when asked for, so that looking does not push what was looked for off the page.
    wanted.push(filter.operation ? `e.operation = ${bind(filter.operation)}` : `e.operation NOT IN (${LOG_READS.map((read) => bind(read)).join(', ')})`);
    if (filter.errorCode) wanted.push(`e.error_code = ${bind(filter.errorCode)}`);
    if (filter.status !== undefined) wanted.push(`e.http_status = ${bind(filter.status)}`);
    if (filter.statusClass !== undefined)
      wanted.push(`e.http_status >= ${bind(filter.statusClass * 100)} AND e.http_status < ${bind(filter.statusClass * 100 + 100)}`);
    const page = bind(limit + 1);
    const columns = `e.*, ${POSITION_SQL} AS position`;
    const order = 'ORDER BY e.occurred_at DESC, e.id DESC';

    if (filter.errorId) {
      // An error id is one request's (ours, a UUID, or the provider's): looked up by its own index, each its own parameter, of its column's type.
      const byError = isUuid(filter.errorId)
        ? `(e.error_id = ${bind(filter.errorId)}::uuid OR e.upstream_error_id = ${bind(filter.errorId)})`
        : `e.upstream_error_id = ${bind(filter.errorId)}`;
      const rows = await this.query(
        `SELECT ${columns} FROM audit_events e WHERE ${[...window, ...wanted, byError].join(' AND ')} ${order} LIMIT ${page}`,
        parameters,
      );
      return this.page(rows, limit);
    }
    // The window's events are read newest first, at most SCAN_PER_PAGE of them a page: a filter that
    // matches little (or nothing) costs no more than that. The reading stops as soon as the page is
    // full; when it is not, the page ends where the reading stopped, with a cursor from there.
    const scan = String(SCAN_PER_PAGE);
    const rows = await this.query(
      `SELECT e.* FROM (SELECT ${columns} FROM audit_events e WHERE ${window.join(' AND ')} ${order} LIMIT ${scan}) e
        WHERE ${wanted.join(' AND ')} ${order} LIMIT ${page}`,
      parameters,
    );
    if (rows.length > limit) return this.page(rows, limit);
    // Not full. Where the reading stops (the SCAN_PER_PAGE-th event), then the page read down to it, in
    // that order: an event written or purged between the two can then make no page repeat or skip one.
    const bounds: unknown[] = [];
    const bindBound = (value: unknown) => `$${bounds.push(value)}`;
    const [stop] = await this.query(
      `SELECT e.id, e.occurred_at, ${POSITION_SQL} AS position FROM audit_events e WHERE ${windowOf(bindBound).join(' AND ')} ${order} OFFSET ${bindBound(SCAN_PER_PAGE - 1)} LIMIT 1`,
      bounds,
    );
    // Fewer events than that are left: the reading above saw them all.
    if (!stop) return this.page(rows, limit);
    const upTo = `(e.occurred_at, e.id) >= (${bind(stop.position)}::timestamptz, ${bind(stop.id)}::uuid)`;
    const bounded = await this.query(
      `SELECT ${columns} FROM audit_events e WHERE ${[...window, upTo, ...wanted].join(' AND ')} ${order} LIMIT ${page}`,
      parameters,
    );
    if (bounded.length > limit) return this.page(bounded, limit);
    return { requests: bounded.map((row) => AuditEventMapper.toDomain(this.entityOf(row))), next: { occurredAt: stop.position, id: stop.id } };
  }

  /** A page of at most `limit` requests, with the cursor after the last when more matched. */
  private page(rows: readonly RawRow[], limit: number): RequestLogPage {
    const requests = rows.slice(0, limit).map((row) => AuditEventMapper.toDomain(this.entityOf(row)));
    if (rows.length <= limit) return { requests };
    return { requests, next: { occurredAt: rows[limit - 1].position, id: rows[limit - 1].id } };
  }

  private query(sql: string, parameters: unknown[]): Promise<RawRow[]> {
    return unavailableOnOutage(() => this.rows.query<RawRow[]>(sql, parameters));
  }

  /** A row as the entity holds it: each column by its property's name. */
  private entityOf(row: RawRow): AuditEventEntity {
    const entity: Record<string, unknown> = {};
    for (const column of this.rows.metadata.columns) entity[column.propertyName] = row[column.databaseName];
    return entity as unknown as AuditEventEntity;
  }

  async timeline(tenant: string, requestId: string, limit: number): Promise<RequestTimeline | undefined> {
    const rows = await unavailableOnOutage(() =>
      this.rows
        .createQueryBuilder('e')
        .where('e.request_id = :requestId', { requestId })
        .andWhere('e.tenant = :tenant', { tenant })
        .andWhere(PARTNER_CALLERS)
        .orderBy('e.occurred_at', 'DESC')
        .addOrderBy('e.id', 'DESC')
        .limit(limit)
        .getMany(),
    );
    if (rows.length === 0) return undefined;
    // The newest `limit`, oldest first.
    const events = rows.map((row) => AuditEventMapper.toDomain(row)).reverse();
    const [replayOf, settledBy] = await Promise.all([this.replayed(tenant, events), this.settlement(tenant, events)]);
    return { events, ...(replayOf ? { replayOf } : {}), ...(settledBy ? { settledBy } : {}) };
  }

  /** For a replay: the request that claimed its reference (the newest `attempted` of it, and of its operation, before the replay). */
  private async replayed(tenant: string, events: readonly AuditEvent[]): Promise<RelatedRequest | undefined> {
    const replay = events.findLast((event) => event.replayed === true && event.reference !== undefined);
    if (!replay) return undefined;
    return this.related(
      `SELECT e.request_id, e.occurred_at FROM audit_events e
        WHERE e.reference = $1 AND ${isAuditQuery()} IS FALSE AND e.operation = $2 AND e.tenant = $3 AND e.phase = 'attempted' AND e.request_id <> $4 AND e.occurred_at < $5
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1`,
      [replay.reference, replay.operation, tenant, replay.requestId, replay.occurredAt],
    );
  }

  /**
   * For a write whose outcome nobody learned (its `attempted` event followed by `unknown`, or by
   * nothing of the same request): a success with its reference and operation, the rule by which the
   * reconciliation list drops a call (PostgresAuditLogRepository's UNRESOLVED_SQL).
   */
  private async settlement(tenant: string, events: readonly AuditEvent[]): Promise<RelatedRequest | undefined> {
    const unresolved = events.findLast(
      (attempt) =>
        attempt.phase === 'attempted' &&
        attempt.reference !== undefined &&
        !events.some(
          (end) =>
            end.phase !== 'attempted' &&
            end.phase !== 'unknown' &&
            end.reference === attempt.reference &&
            end.operation === attempt.operation &&
            end.occurredAt >= attempt.occurredAt,
        ),
    );
    if (!unresolved) return undefined;
    return this.related(
      `SELECT e.request_id, e.occurred_at FROM audit_events e
        WHERE e.reference = $1 AND ${isAuditQuery()} IS FALSE AND e.operation = $2 AND e.tenant = $3 AND e.phase = 'succeeded'
        ORDER BY e.occurred_at ASC, e.id ASC LIMIT 1`,
      [unresolved.reference, unresolved.operation, tenant],
    );
  }

  private async related(sql: string, parameters: unknown[]): Promise<RelatedRequest | undefined> {
    const [row] = await unavailableOnOutage(() => this.rows.query<RelatedRow[]>(sql, parameters));
    return row ? { requestId: row.request_id, occurredAt: row.occurred_at } : undefined;
  }
}
