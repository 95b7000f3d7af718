import type { ListPosition } from '../../../common/domain/list-cursor';
import type { EventType } from '../../events/domain/event-types';

/** Why an endpoint was disabled by the service (an endpoint its tenant disabled has none). */
export type DisabledReason = 'gone' | 'failing';

/** Where a tenant wants its events (docs/webhooks.md). */
export interface WebhookEndpoint {
  readonly id: string;
  readonly tenant: string;
  readonly url: string;
  /** Empty: every type. */
  readonly eventTypes: readonly EventType[];
  readonly enabled: boolean;
  readonly description?: string;
  /** A resource's next event waits for the delivery of the one before. */
  readonly ordered: boolean;
  /** Deliveries carry the resource as it stood (`object`). */
  readonly snapshot: boolean;
  readonly disabledReason?: DisabledReason;
  /** Until when the secret before the last rotation still signs beside the new one. */
  readonly previousSecretUntil?: string;
  /** Since when every attempt to it has failed (none delivered since). */
  readonly failingSince?: string;
  /** Its last failed attempt: a run of failures with a day's gap in it is two runs. */
  readonly lastFailureAt?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly position: ListPosition;
}

export interface EndpointSettings {
  readonly url: string;
  readonly eventTypes: readonly EventType[];
  readonly enabled: boolean;
  readonly description?: string;
  readonly ordered: boolean;
  readonly snapshot: boolean;
}

export interface EndpointPage {
  readonly endpoints: readonly WebhookEndpoint[];
  readonly next?: ListPosition;
}

/** One attempt at delivering an event to an endpoint, as the delivery log shows it. */
export interface DeliveryAttempt {
  readonly id: string;
  readonly eventId: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly attemptedAt: string;
  readonly httpStatus?: number;
  readonly latencyMs: number;
  /** The first 1 KiB of the endpoint's answer. */
  readonly response?: string;
  readonly failure?: string;
  /** When the next attempt is due, when there is one. */
  readonly nextAttemptAt?: string;
  readonly position: ListPosition;
}

export interface AttemptPage {
  readonly attempts: readonly DeliveryAttempt[];
  readonly next?: ListPosition;
}

/** A tenant's endpoints, their sealed secrets, and their delivery log. */
export abstract class WebhookEndpoints {
  /** Stores a new endpoint with its first secret (sealed). */
  abstract create(tenant: string, settings: EndpointSettings, secret: string): Promise<WebhookEndpoint>;
  abstract list(tenant: string, limit: number, after?: ListPosition): Promise<EndpointPage>;
  abstract find(id: string, tenant: string): Promise<WebhookEndpoint | undefined>;
  /** Changes what is given; enabling again clears the reason it was disabled. Undefined when the tenant has no such endpoint. */
  abstract update(id: string, tenant: string, changes: Partial<EndpointSettings>): Promise<WebhookEndpoint | undefined>;
  /** False when the tenant has no such endpoint. */
  abstract remove(id: string, tenant: string): Promise<boolean>;
  /** A new secret; the current one keeps signing beside it until `previousUntil` (none: revoked at once). */
  abstract rotate(id: string, tenant: string, secret: string, previousUntil?: Date): Promise<WebhookEndpoint | undefined>;
  /** Its attempts, newest first; an event's only, with `eventId`. */
  abstract attempts(filter: { tenant: string; endpointId?: string; eventId?: string }, limit: number, after?: ListPosition): Promise<AttemptPage>;
  /**
   * Delivers again: one event, or every delivery of the endpoint that failed in [from, to). Each is
   * attempted at once, on a fresh schedule. Resolves to how many were asked for.
   */
  abstract redeliver(endpointId: string, tenant: string, which: { eventId: string } | { from?: string; to?: string }): Promise<number>;
}
