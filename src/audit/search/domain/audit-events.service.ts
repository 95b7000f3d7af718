import { Injectable } from '@nestjs/common';
import { isUuid } from '../../../common/domain/identifiers';
import { AuditEvent, AuditEventFilter, AuditPosition } from '../../trail/domain/audit-event';
import { AccessReport, AuditSearch } from './audit-search.port';
import { AuditEventNotFound, InvalidAuditCursor, InvalidAuditRange } from './search.errors';

export const MAX_AUDIT_PAGE = 500;
/** An access report covers at most this many days, and lists at most this many people and customers. */
export const MAX_REPORT_DAYS = 366;
export const MAX_REPORT_ROWS = 1000;

export interface AuditEventsPage {
  readonly events: readonly AuditEvent[];
  /** Opaque; pass it back as `cursor` for the next (older) page. */
  readonly nextCursor?: string;
}

const POSITION_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a position's time names a real instant that timestamptz holds (no 13th month, no 30
 * February, no year 0000, which JavaScript reads and PostgreSQL refuses): the database would refuse
 * anything else, a 500 were it sent.
 */
function isRealInstant(occurredAt: string): boolean {
  const millis = `${occurredAt.slice(0, 23)}Z`;
  const date = new Date(millis);
  return !Number.isNaN(date.getTime()) && date.toISOString() === millis && !occurredAt.startsWith('0000');
}

export function encodeCursor(position: AuditPosition): string {
  return Buffer.from(JSON.stringify([position.occurredAt, position.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): AuditPosition {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 2) {
      const [occurredAt, id] = decoded as unknown[];
      if (typeof occurredAt === 'string' && POSITION_TIME.test(occurredAt) && isUuid(id) && isRealInstant(occurredAt)) {
        return { occurredAt, id };
      }
    }
  } catch {
    // fall through
  }
  throw new InvalidAuditCursor();
}

/** What support and compliance staff read: the audit log, newest first, a page at a time. */
@Injectable()
export class AuditEventsService {
  constructor(private readonly log: AuditSearch) {}

  async search(filter: AuditEventFilter, limit: number, cursor?: string): Promise<AuditEventsPage> {
    if (filter.from && filter.to && filter.from >= filter.to) throw new InvalidAuditRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.log.find(filter, Math.min(limit, MAX_AUDIT_PAGE), after);
    return { events: page.events, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /** Who searched the audit log in [from, to), by person and by customer (the access review's report). At most a year at a time. */
  async accessReport(from: Date, to: Date): Promise<AccessReport> {
    if (from >= to || to.getTime() - from.getTime() > MAX_REPORT_DAYS * 86_400_000)
      throw new InvalidAuditRange(`from must be before to, and at most ${MAX_REPORT_DAYS} days before it`);
    return this.log.accessReport(from, to, MAX_REPORT_ROWS);
  }

  async get(id: string): Promise<AuditEvent> {
    const event = await this.log.get(id);
    if (!event) throw new AuditEventNotFound();
    return event;
  }
}
