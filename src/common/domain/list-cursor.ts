import { DomainError } from './domain-error';

/**
 * The service's one cursor convention, for every list it answers (the audit search, the request
 * log, a partner's customers and bank accounts): newest first, by (time, id), the cursor the last
 * item's position, base64url of `[time, id]`. Stable under inserts: a row written after the first
 * page is newer than every cursor, so no page repeats or skips one that was there.
 */
export interface ListPosition {
  /** The time, to the microsecond as PostgreSQL holds it: YYYY-MM-DDTHH:MM:SS.ffffffZ. */
  readonly at: string;
  readonly id: string;
}

/** A timestamptz column as a position's time, to the microsecond (Date would round it to the millisecond). */
export const positionTimeSql = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const POSITION_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a position's time names a real instant that timestamptz holds (no 13th month, no 30
 * February, no year 0000, which JavaScript reads and PostgreSQL refuses): the database would refuse
 * anything else, a 500 were it sent.
 */
function isRealInstant(at: string): boolean {
  const millis = `${at.slice(0, 23)}Z`;
  const date = new Date(millis);
  return !Number.isNaN(date.getTime()) && date.toISOString() === millis && !at.startsWith('0000');
}

/** `AUDIT.INVALID_CURSOR` (its name from the audit search, the first list; every list answers it). */
export class InvalidCursor extends DomainError {
  constructor() {
    super('AUDIT.INVALID_CURSOR', {
      fields: [{ field: 'cursor', message: 'cursor must be a value returned as next_cursor' }],
    });
  }
}

/** `AUDIT.INVALID_RANGE`: a list's time filters that leave nothing between them. */
export class InvalidRange extends DomainError {
  constructor(message = 'from must be before to') {
    super('AUDIT.INVALID_RANGE', message, {
      fields: [{ field: 'from', message }],
    });
  }
}

/**
 * Whether a created range leaves nothing between its ends: `from` at or after `to`. Compared to the
 * millisecond (what Date reads); two ends within one millisecond are left to the database, which
 * answers an empty page.
 */
export function isEmptyRange(range: { from?: string; to?: string }): boolean {
  if (range.from === undefined || range.to === undefined) return false;
  return new Date(range.from).getTime() > new Date(range.to).getTime() || range.from === range.to;
}

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor names; InvalidCursor for anything this service did not issue (`isId` tells the list's ids). */
export function decodeCursor(cursor: string, isId: (id: unknown) => id is string): ListPosition {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 2) {
      const [at, id] = decoded as unknown[];
      if (typeof at === 'string' && POSITION_TIME.test(at) && isId(id) && isRealInstant(at)) return { at, id };
    }
  } catch {
    // fall through
  }
  throw new InvalidCursor();
}
