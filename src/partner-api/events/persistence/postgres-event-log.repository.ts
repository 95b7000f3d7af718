import { Injectable } from '@nestjs/common';
import { ListPosition, positionTimeSql } from '../../../common/domain/list-cursor';
import { Sql } from '../../../database/sql';
import { unavailableOnOutage } from '../../../database/store-errors';
import type { EventType } from '../domain/event-types';
import { EventFilter, EventPage, PartnerEvent, PartnerEventLog } from '../domain/partner-event';

export interface EventRow {
  id: string;
  type: EventType;
  tenant: string;
  resource_type: string;
  resource_id: string;
  sequence: number;
  request_id: string | null;
  reference: string | null;
  audit_event_id: string | null;
  data: Record<string, unknown>;
  snapshot: Record<string, unknown> | null;
  created_at: string;
}

/**
 * An event's columns. Its audit event is the one written with the fact where there is one; for a
 * fact written before its request's terminal event (a binding), that terminal event, found by the
 * request's id within the tenant (a caller chooses its X-Request-Id: another tenant's may be the same).
 */
export const EVENT_COLUMNS = `e.id, e.type, e.tenant, e.resource_type, e.resource_id, e.sequence, e.request_id, e.reference,
  coalesce(e.audit_event_id, (SELECT a.id FROM audit_events a WHERE a.request_id = e.request_id AND a.tenant = e.tenant AND a.phase <> 'attempted'
                              ORDER BY a.occurred_at LIMIT 1)) AS audit_event_id,
  e.data, e.snapshot, ${positionTimeSql('e.created_at')} AS created_at`;

export function eventOf(row: EventRow): PartnerEvent {
  return {
    id: row.id,
    type: row.type,
    tenant: row.tenant,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    sequence: row.sequence,
    ...(row.request_id ? { requestId: row.request_id } : {}),
    ...(row.reference ? { reference: row.reference } : {}),
    ...(row.audit_event_id ? { auditEventId: row.audit_event_id } : {}),
    data: row.data,
    ...(row.snapshot ? { snapshot: row.snapshot } : {}),
    createdAt: row.created_at,
    position: { at: row.created_at, id: row.id },
  };
}

@Injectable()
export class PostgresPartnerEventLog extends PartnerEventLog {
  constructor(private readonly sql: Sql) {
    super();
  }

  async list(filter: EventFilter, limit: number, after?: ListPosition): Promise<EventPage> {
    const values: unknown[] = [];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const where = [`e.tenant = ${bind(filter.tenant)}`];
    if (filter.types?.length) where.push(`e.type = ANY(${bind(filter.types)}::text[])`);
    if (filter.resourceId) where.push(`e.resource_id = ${bind(filter.resourceId)}`);
    if (filter.from) where.push(`e.created_at >= ${bind(filter.from)}::timestamptz`);
    if (filter.to) where.push(`e.created_at < ${bind(filter.to)}::timestamptz`);
    if (after) where.push(`(e.created_at, e.id) < (${bind(after.at)}::timestamptz, ${bind(after.id)}::uuid)`);
    const rows = await unavailableOnOutage(() =>
      this.sql.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM partner_events e WHERE ${where.join(' AND ')} ORDER BY e.created_at DESC, e.id DESC LIMIT ${bind(limit + 1)}`,
        values,
      ),
    );
    const events = rows.slice(0, limit).map(eventOf);
    return { events, ...(rows.length > limit ? { next: events[events.length - 1].position } : {}) };
  }

  async find(id: string, tenant: string): Promise<PartnerEvent | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM partner_events e WHERE e.id = $1 AND e.tenant = $2`, [id, tenant]),
    );
    return row ? eventOf(row) : undefined;
  }

  async ofRequest(requestId: string, tenant: string): Promise<PartnerEvent[]> {
    const rows = await unavailableOnOutage(() =>
      this.sql.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM partner_events e WHERE e.request_id = $1 AND e.tenant = $2 ORDER BY e.created_at, e.id LIMIT 100`,
        [requestId, tenant],
      ),
    );
    return rows.map(eventOf);
  }
}
