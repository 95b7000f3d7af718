import type { EventType } from './event-types';
import type { PartnerEvent } from './partner-event';

/** An event as partners see it, in the API and in a webhook's body alike (snake_case, as the API speaks). */
export interface EventView {
  readonly id: string;
  readonly type: EventType;
  readonly created_at: string;
  readonly resource: { readonly type: string; readonly id: string };
  readonly sequence: number;
  readonly request_id: string | null;
  readonly reference: string | null;
  readonly audit_event_id: string | null;
  readonly data: Record<string, unknown>;
  readonly object: Record<string, unknown> | null;
}

/** `withObject`: the resource as it stood (the API always; a webhook for an endpoint with `snapshot`). */
export function eventView(event: PartnerEvent, withObject = true): EventView {
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt,
    resource: { type: event.resourceType, id: event.resourceId },
    sequence: event.sequence,
    request_id: event.requestId ?? null,
    reference: event.reference ?? null,
    audit_event_id: event.auditEventId ?? null,
    data: { ...event.data },
    object: withObject && event.snapshot ? { ...event.snapshot } : null,
  };
}
