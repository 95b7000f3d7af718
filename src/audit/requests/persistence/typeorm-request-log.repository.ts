import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUuid } from '../../../common/domain/identifiers';
import { OPERATION } from '../../../common/domain/audit-operations';
import { unavailableOnOutage } from '../../../database/store-errors';
import type { AuditEvent, AuditPosition } from '../../trail/domain/audit-event';
import { AuditEventEntity } from '../../trail/persistence/audit-event.entity';
import { AuditEventMapper } from '../../trail/persistence/audit-event.mapper';
import { POSITION_SQL } from '../../trail/persistence/typeorm-audit-log.repository';
import { RelatedRequest, RequestLogFilter, RequestLogPage, RequestLogStore, RequestTimeline } from '../domain/request-log.port';

const LOG_READS = [OPERATION.listRequests, OPERATION.readRequest];

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
  phase: RelatedRequest['phase'];
}

/** A partner's requests over audit_events: the tenant's index, newest first, keyset pages; one request by the request id's index. */
@Injectable()
export class TypeOrmRequestLogRepository extends RequestLogStore {
  constructor(@InjectRepository(AuditEventEntity) private readonly rows: Repository<AuditEventEntity>) {
    super();
  }

  async list(filter: RequestLogFilter, limit: number, after?: AuditPosition): Promise<RequestLogPage> {
    const query = this.rows
      .createQueryBuilder('e')
      .addSelect(POSITION_SQL, 'position')
      .where('e.tenant = :tenant', { tenant: filter.tenant })
      .andWhere(PARTNER_CALLERS)
      .andWhere(LAST_EVENT);
    if (filter.reference) query.andWhere('e.reference = :reference', { reference: filter.reference });
    if (filter.customerId) query.andWhere('e.customer_id = :customerId', { customerId: filter.customerId });
    // Reading the log leaves events too: listed only when asked for, so that looking does not push what was looked for off the page.
    if (filter.operation) query.andWhere('e.operation = :operation', { operation: filter.operation });
    else query.andWhere('e.operation NOT IN (:...reads)', { reads: LOG_READS });
    if (filter.errorCode) query.andWhere('e.error_code = :errorCode', { errorCode: filter.errorCode });
    if (filter.status !== undefined) query.andWhere('e.http_status = :status', { status: filter.status });
    if (filter.statusClass !== undefined) {
      query.andWhere('e.http_status >= :lowest AND e.http_status < :above', { lowest: filter.statusClass * 100, above: filter.statusClass * 100 + 100 });
    }
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
    const requests = entities.slice(0, limit).map((row) => AuditEventMapper.toDomain(row));
    if (entities.length <= limit) return { requests };
    return { requests, next: { occurredAt: raw[limit - 1].position, id: entities[limit - 1].id } };
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
      `SELECT e.request_id, e.occurred_at, e.phase FROM audit_events e
        WHERE e.reference = $1 AND e.operation = $2 AND e.tenant = $3 AND e.phase = 'attempted' AND e.request_id <> $4 AND e.occurred_at < $5
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1`,
      [replay.reference, replay.operation, tenant, replay.requestId, replay.occurredAt],
    );
  }

  /**
   * For a write whose outcome nobody learned (its `attempted` event followed by `unknown`, or by
   * nothing of the same request): a success with its reference and operation, the rule by which the
   * reconciliation list drops a call (TypeOrmAuditLogRepository's UNRESOLVED_SQL).
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
      `SELECT e.request_id, e.occurred_at, e.phase FROM audit_events e
        WHERE e.reference = $1 AND e.operation = $2 AND e.tenant = $3 AND e.phase = 'succeeded'
        ORDER BY e.occurred_at ASC, e.id ASC LIMIT 1`,
      [unresolved.reference, unresolved.operation, tenant],
    );
  }

  private async related(sql: string, parameters: unknown[]): Promise<RelatedRequest | undefined> {
    const [row] = await unavailableOnOutage(() => this.rows.query<RelatedRow[]>(sql, parameters));
    return row ? { requestId: row.request_id, occurredAt: row.occurred_at, phase: row.phase } : undefined;
  }
}
