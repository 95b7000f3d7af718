import type { ListPosition } from '../../../common/domain/list-cursor';
import type { EventType } from './event-types';

/** One thing that happened to one of a tenant's resources, as it was recorded with the fact (docs/events.md). */
export interface PartnerEvent {
  readonly id: string;
  readonly type: EventType;
  readonly tenant: string;
  readonly resourceType: string;
  readonly resourceId: string;
  /** 1 for a resource's first event, then 2, 3…: a receiver orders a resource's events by it. */
  readonly sequence: number;
  readonly requestId?: string;
  readonly reference?: string;
  /** The audit event that records the fact: its receipt proves this event too. */
  readonly auditEventId?: string;
  /** Ids and status. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The resource as it stood, for an endpoint that asks for it. */
  readonly snapshot?: Readonly<Record<string, unknown>>;
  /** To the microsecond, in UTC (ListPosition's time). */
  readonly createdAt: string;
  readonly position: ListPosition;
}

export interface EventFilter {
  readonly tenant: string;
  readonly types?: readonly EventType[];
  readonly from?: string;
  readonly to?: string;
  readonly resourceId?: string;
}

export interface EventPage {
  readonly events: readonly PartnerEvent[];
  readonly next?: ListPosition;
}

/** The tenant's events, written with their facts (the outbox); read here, never changed. */
export abstract class PartnerEventLog {
  abstract list(filter: EventFilter, limit: number, after?: ListPosition): Promise<EventPage>;
  /** The tenant's event with this id; undefined when it has none. */
  abstract find(id: string, tenant: string): Promise<PartnerEvent | undefined>;
  /** The events one request caused, oldest first (the request log's timeline). */
  abstract ofRequest(requestId: string, tenant: string): Promise<PartnerEvent[]>;
}
