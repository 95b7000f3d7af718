import { Injectable } from '@nestjs/common';
import { isUuid } from '../../../common/domain/identifiers';
import { AuditEvent, AuditEventFilter, AuditPosition } from '../../trail/domain/audit-event';
import { AccessReport, AuditSearch } from './audit-search.port';
import { AuditEventNotFound } from './search.errors';
import { decodeCursor as decodeListCursor, encodeCursor as encodeListCursor, InvalidRange } from '../../../common/domain/list-cursor';

export const MAX_AUDIT_PAGE = 500;
/** An access report covers at most this many days, and lists at most this many people and customers. */
export const MAX_REPORT_DAYS = 366;
export const MAX_REPORT_ROWS = 1000;

export interface AuditEventsPage {
  readonly events: readonly AuditEvent[];
  /** Opaque; pass it back as `cursor` for the next (older) page. */
  readonly nextCursor?: string;
}

/** The audit log's positions in the service's one cursor convention (common/domain/list-cursor.ts). */
export function encodeCursor(position: AuditPosition): string {
  return encodeListCursor({ at: position.occurredAt, id: position.id });
}

export function decodeCursor(cursor: string): AuditPosition {
  const { at, id } = decodeListCursor(cursor, isUuid);
  return { occurredAt: at, id };
}

/** What support and compliance staff read: the audit log, newest first, a page at a time. */
@Injectable()
export class AuditEventsService {
  constructor(private readonly log: AuditSearch) {}

  async search(filter: AuditEventFilter, limit: number, cursor?: string): Promise<AuditEventsPage> {
    if (filter.from && filter.to && filter.from >= filter.to) throw new InvalidRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.log.find(filter, Math.min(limit, MAX_AUDIT_PAGE), after);
    return { events: page.events, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /** Who searched the audit log in [from, to), by person and by customer (the access review's report). At most a year at a time. */
  async accessReport(from: Date, to: Date): Promise<AccessReport> {
    if (from >= to || to.getTime() - from.getTime() > MAX_REPORT_DAYS * 86_400_000)
      throw new InvalidRange(`from must be before to, and at most ${MAX_REPORT_DAYS} days before it`);
    return this.log.accessReport(from, to, MAX_REPORT_ROWS);
  }

  async get(id: string): Promise<AuditEvent> {
    const event = await this.log.get(id);
    if (!event) throw new AuditEventNotFound();
    return event;
  }
}
