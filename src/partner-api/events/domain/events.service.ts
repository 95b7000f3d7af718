import { Injectable } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { decodeCursor, encodeCursor, InvalidRange, isEmptyRange } from '../../../common/domain/list-cursor';
import { EventNotFound } from './events.errors';
import type { EventType } from './event-types';
import { PartnerEvent, PartnerEventLog } from './partner-event';

/** What the events slice's requests are audited as. */
export const EVENT_OPERATIONS = { list: 'event.list', read: 'event.read' } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isEventId = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

export interface EventQuery {
  readonly types?: readonly EventType[];
  readonly from?: string;
  readonly to?: string;
}

export interface EventListing {
  readonly events: readonly PartnerEvent[];
  readonly nextCursor?: string;
}

/** A tenant's events, newest first: what its webhooks were sent, to read again or to catch up with. */
@Injectable()
export class EventsService {
  constructor(private readonly log: PartnerEventLog) {}

  async list(caller: AuthenticatedClient, query: EventQuery, limit: number, cursor?: string): Promise<EventListing> {
    if (isEmptyRange(query)) throw new InvalidRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor, isEventId);
    const page = await this.log.list({ ...query, tenant: caller.tenant }, limit, after);
    return { events: page.events, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /** @throws EventNotFound for another tenant's, or none. */
  async read(caller: AuthenticatedClient, id: string): Promise<PartnerEvent> {
    const event = isEventId(id) ? await this.log.find(id, caller.tenant) : undefined;
    if (!event) throw new EventNotFound();
    return event;
  }
}
