import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import { eventView } from '../../events/domain/event-view';
import { PartnerEvent, PartnerEventLog } from '../../events/domain/partner-event';
import type { WebhookEndpoint } from '../domain/webhook-endpoint';
import { AttemptRecord, DeliveryEnding, DeliveryJobs, DueDelivery, WebhookSigner, WebhookTransport } from '../domain/delivery.ports';
import { DISABLE_AFTER_FAILING_MS, FAILURE_RUN_GAP_HOURS, nextAttemptDelayMs, outcomeOf } from '../domain/delivery-schedule';

/**
 * The body a delivery carries: the event as GET /api/v1/events/{id} shows it (`object` only for an
 * endpoint that asks), the endpoint it is for, and when it was signed. The endpoint's id is signed
 * with it: a delivery one tenant received, sent on to another's endpoint, names the wrong endpoint
 * (the `v1a` key is the gateway's, the same for every tenant).
 */
export function deliveryBody(event: PartnerEvent, endpoint: Pick<WebhookEndpoint, 'id' | 'snapshot'>, timestamp: Date): string {
  return JSON.stringify({ ...eventView(event, endpoint.snapshot), endpoint_id: endpoint.id, timestamp: timestamp.toISOString() });
}

/**
 * Delivers one event to one endpoint, once per job the engine hands it (at least once: a worker that
 * stops mid-attempt leaves the job to be run again, with the same `webhook-id`): signs, sends, and
 * records the attempt with what comes next (docs/webhooks.md).
 */
@Injectable()
export class WebhookDelivery {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly jobs: DeliveryJobs,
    private readonly transport: WebhookTransport,
    private readonly signer: WebhookSigner,
    private readonly clock: Clock,
    private readonly events: PartnerEventLog,
  ) {}

  fanOut(eventId: string): Promise<number> {
    return this.jobs.fanOut(eventId);
  }

  /** `generation`: the job's; a job of a generation a redelivery has replaced does nothing. */
  async deliver(deliveryId: string, generation?: number): Promise<void> {
    const delivery = await this.jobs.load(deliveryId);
    // Delivered or given up on already (a job run again after its attempt was recorded), or its endpoint deleted.
    if (!delivery || delivery.status === 'succeeded' || delivery.status === 'failed') return;
    if (generation !== undefined && generation !== delivery.generation) return;
    if (!delivery.endpoint.enabled) {
      await this.jobs.finish(delivery, this.skipped(delivery, 'endpoint_disabled'), { status: 'failed' });
      return;
    }
    if (delivery.waitsForEarlier) {
      await this.jobs.wait(delivery.id);
      return;
    }
    const event = await this.events.find(delivery.eventId, delivery.endpoint.tenant);
    if (!event) {
      // Never so while events are never deleted: ended, rather than left pending, holding up its resource's next events.
      await this.jobs.finish(delivery, this.skipped(delivery, 'event_missing'), { status: 'failed' });
      return;
    }
    const attemptedAt = this.clock.now();
    const body = deliveryBody(event, delivery.endpoint, attemptedAt);
    // The event's id is the webhook-id: the same on every attempt and redelivery, for the receiver to deliver it once.
    const headers = await this.signer.headers(event.id, attemptedAt, body, delivery.secrets);
    const answer = await this.transport.post(delivery.endpoint.url, headers, body);
    const attempt: AttemptRecord = {
      attempt: delivery.attempts + 1,
      attemptedAt,
      httpStatus: answer.status,
      latencyMs: answer.latencyMs,
      response: answer.response,
      failure: answer.failure ?? (answer.status !== undefined && (answer.status < 200 || answer.status >= 300) ? 'http_status' : undefined),
    };
    await this.jobs.finish(
      delivery,
      attempt,
      this.ending(delivery, attempt, answer.failure ? { kind: 'failed' } : outcomeOf(answer.status, answer.retryAfter)),
    );
  }

  private ending(delivery: DueDelivery, attempt: AttemptRecord, outcome: ReturnType<typeof outcomeOf>): DeliveryEnding {
    if (outcome.kind === 'delivered') return { status: 'succeeded' };
    if (outcome.kind === 'gone') {
      this.logger.warn({ endpoint_id: delivery.endpoint.id }, 'A webhook endpoint answered 410 Gone: it is disabled');
      return { status: 'failed', disable: 'gone' };
    }
    // The run of failures this attempt belongs to: a new one when the last failure was a day or more ago.
    const { failingSince, lastFailureAt } = delivery.endpoint;
    const runGoesOn = failingSince && lastFailureAt && attempt.attemptedAt.getTime() - Date.parse(lastFailureAt) < FAILURE_RUN_GAP_HOURS * 3_600_000;
    const failingSinceMs = runGoesOn ? Date.parse(failingSince) : attempt.attemptedAt.getTime();
    if (attempt.attemptedAt.getTime() - failingSinceMs >= DISABLE_AFTER_FAILING_MS) {
      this.logger.warn({ endpoint_id: delivery.endpoint.id }, 'A webhook endpoint failed every attempt for 5 days: it is disabled');
      return { status: 'failed', disable: 'failing' };
    }
    const delay = nextAttemptDelayMs(attempt.attempt, outcome.retryAfterMs);
    if (delay === undefined) return { status: 'failed' };
    return { status: 'pending', nextAttemptAt: new Date(attempt.attemptedAt.getTime() + delay) };
  }

  private skipped(delivery: DueDelivery, failure: string): AttemptRecord {
    return { attempt: delivery.attempts + 1, attemptedAt: this.clock.now(), latencyMs: 0, failure };
  }
}
