import { Injectable } from '@nestjs/common';
import { decodeCursor, encodeCursor } from '../../search/domain/audit-events.service';
import { InvalidRange } from '../../../common/domain/list-cursor';
import type { AuditEvent } from '../../trail/domain/audit-event';
import { RequestLogFilter, RequestLogStore, RequestTimeline } from './request-log.port';
import { RequestNotFound } from './request-log.errors';
import { PartnerEvent, PartnerEventLog } from '../../../partner-api/events/domain/partner-event';

export const MAX_REQUEST_LOG_PAGE = 100;
/** A timeline holds at most this many events: a request leaves two or three, unless its caller reused its X-Request-Id. */
export const MAX_TIMELINE_EVENTS = 200;

export interface RequestLogListing {
  readonly requests: readonly AuditEvent[];
  /** Opaque; pass it back as `cursor` for the next (older) page. */
  readonly nextCursor?: string;
}

/** A partner's own requests, and what became of each (docs/decisions.md, "Request logs"). */
@Injectable()
export class RequestLog {
  constructor(
    private readonly store: RequestLogStore,
    private readonly events: PartnerEventLog,
  ) {}

  async list(filter: RequestLogFilter, limit: number, cursor?: string): Promise<RequestLogListing> {
    if (filter.from && filter.to && filter.from >= filter.to) throw new InvalidRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.store.list(filter, Math.min(limit, MAX_REQUEST_LOG_PAGE), after);
    return { requests: page.requests, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /** @throws RequestNotFound when the tenant has no request with this id. */
  async timeline(tenant: string, requestId: string): Promise<RequestTimeline & { readonly caused: readonly PartnerEvent[] }> {
    const timeline = await this.store.timeline(tenant, requestId, MAX_TIMELINE_EVENTS);
    if (!timeline) throw new RequestNotFound();
    // The events it caused (docs/events.md): what its tenant's webhooks were sent of it.
    return { ...timeline, caused: await this.events.ofRequest(requestId, tenant) };
  }
}
