import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { Clock } from '../../../common/domain/clock.port';
import { decodeCursor, encodeCursor, InvalidRange, isEmptyRange } from '../../../common/domain/list-cursor';
import { isEventId } from '../../events/domain/events.service';
import { DestinationPolicy } from './destination-policy';
import { DeliveryAttempt, EndpointSettings, WebhookEndpoint, WebhookEndpoints } from './webhook-endpoint';
import { DeliveryNotFound, WebhookEndpointNotFound, WebhookUrlRefused } from './webhooks.errors';

/** What the webhooks slice's requests are audited as. */
export const WEBHOOK_OPERATIONS = {
  create: 'webhook_endpoint.create',
  list: 'webhook_endpoint.list',
  read: 'webhook_endpoint.read',
  update: 'webhook_endpoint.update',
  delete: 'webhook_endpoint.delete',
  rotate: 'webhook_endpoint.rotate_secret',
  deliveries: 'webhook_endpoint.deliveries',
  redeliver: 'webhook_endpoint.redeliver',
  eventDeliveries: 'event.deliveries',
  keys: 'webhook.keys',
} as const;

/** How long a rotated secret keeps signing beside the new one, unless told otherwise. */
export const DEFAULT_OVERLAP_HOURS = 24;

/** A new endpoint secret: 24 random bytes, as Standard Webhooks writes them (`whsec_` and base64). */
export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export interface WithSecret {
  readonly endpoint: WebhookEndpoint;
  /** Shown once: the service keeps it sealed and never shows it again. */
  readonly secret: string;
}

export interface Listing<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/** A tenant's webhook endpoints: made, changed, rotated, removed, and their delivery log (docs/webhooks.md). */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly endpoints: WebhookEndpoints,
    private readonly policy: DestinationPolicy,
    private readonly clock: Clock,
  ) {}

  async create(caller: AuthenticatedClient, settings: EndpointSettings): Promise<WithSecret> {
    this.checkUrl(settings.url);
    const secret = newSecret();
    return { endpoint: await this.endpoints.create(caller.tenant, settings, secret), secret };
  }

  async list(caller: AuthenticatedClient, limit: number, cursor?: string): Promise<Listing<WebhookEndpoint>> {
    const page = await this.endpoints.list(caller.tenant, limit, cursor === undefined ? undefined : decodeCursor(cursor, isEventId));
    return { items: page.endpoints, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  async read(caller: AuthenticatedClient, id: string): Promise<WebhookEndpoint> {
    const endpoint = isEventId(id) ? await this.endpoints.find(id, caller.tenant) : undefined;
    if (!endpoint) throw new WebhookEndpointNotFound();
    return endpoint;
  }

  async update(caller: AuthenticatedClient, id: string, changes: Partial<EndpointSettings>): Promise<WebhookEndpoint> {
    if (changes.url !== undefined) this.checkUrl(changes.url);
    const endpoint = isEventId(id) ? await this.endpoints.update(id, caller.tenant, changes) : undefined;
    if (!endpoint) throw new WebhookEndpointNotFound();
    return endpoint;
  }

  async remove(caller: AuthenticatedClient, id: string): Promise<void> {
    if (!isEventId(id) || !(await this.endpoints.remove(id, caller.tenant))) throw new WebhookEndpointNotFound();
  }

  /** A new secret; the old one signs beside it for `overlapHours` (0: revoked at once). */
  async rotate(caller: AuthenticatedClient, id: string, overlapHours: number = DEFAULT_OVERLAP_HOURS): Promise<WithSecret> {
    const secret = newSecret();
    const until = overlapHours > 0 ? new Date(this.clock.now().getTime() + overlapHours * 3_600_000) : undefined;
    const endpoint = isEventId(id) ? await this.endpoints.rotate(id, caller.tenant, secret, until) : undefined;
    if (!endpoint) throw new WebhookEndpointNotFound();
    return { endpoint, secret };
  }

  /** The endpoint's attempts, newest first; one event's with `eventId`. */
  async attempts(
    caller: AuthenticatedClient,
    which: { endpointId?: string; eventId?: string },
    limit: number,
    cursor?: string,
  ): Promise<Listing<DeliveryAttempt>> {
    if (which.endpointId !== undefined) await this.read(caller, which.endpointId);
    const after = cursor === undefined ? undefined : decodeCursor(cursor, isEventId);
    const page = await this.endpoints.attempts({ tenant: caller.tenant, ...which }, limit, after);
    return { items: page.attempts, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /** Delivers again one event, or every delivery that failed in a range; resolves to how many. */
  async redeliver(caller: AuthenticatedClient, id: string, which: { eventId: string } | { from?: string; to?: string }): Promise<number> {
    const endpoint = await this.read(caller, id);
    if ('eventId' in which) {
      const count = isEventId(which.eventId) ? await this.endpoints.redeliver(endpoint.id, caller.tenant, which) : 0;
      if (count === 0) throw new DeliveryNotFound();
      return count;
    }
    if (isEmptyRange(which)) throw new InvalidRange();
    return this.endpoints.redeliver(endpoint.id, caller.tenant, which);
  }

  private checkUrl(url: string): void {
    const refusal = this.policy.refusalOfUrl(url);
    if (refusal) throw new WebhookUrlRefused(refusal);
  }
}
