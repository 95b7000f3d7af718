import type { DisabledReason, WebhookEndpoint } from './webhook-endpoint';

/** A delivery due: its event's id, the endpoint with its secrets opened, and how many attempts were made before. */
export interface DueDelivery {
  readonly id: string;
  readonly status: 'pending' | 'waiting' | 'succeeded' | 'failed';
  readonly attempts: number;
  /** A redelivery starts a new generation: an attempt of an older one that ends late changes nothing but the log. */
  readonly generation: number;
  readonly eventId: string;
  readonly endpoint: WebhookEndpoint;
  /** The current secret first; the one before it while its overlap lasts. */
  readonly secrets: readonly string[];
  /** An ordered endpoint: an earlier event of the same resource not yet delivered (nor given up on). */
  readonly waitsForEarlier: boolean;
}

/** What one attempt found, as the delivery log keeps it. */
export interface AttemptRecord {
  readonly attempt: number;
  readonly attemptedAt: Date;
  readonly httpStatus?: number;
  readonly latencyMs: number;
  readonly response?: string;
  /** timeout, connection, refused_address, http_status, redirect. */
  readonly failure?: string;
}

/** How a delivery stands after an attempt. */
export type DeliveryEnding =
  | { readonly status: 'succeeded' }
  | { readonly status: 'pending'; readonly nextAttemptAt: Date }
  | { readonly status: 'failed'; readonly disable?: DisabledReason };

/** The deliveries' state, kept with the job engine's jobs in one transaction each. */
export abstract class DeliveryJobs {
  /** Makes a delivery for each enabled endpoint of the event's tenant that takes its type, and asks for each to be attempted. */
  abstract fanOut(eventId: string): Promise<number>;
  abstract load(deliveryId: string): Promise<DueDelivery | undefined>;
  /** A delivery of an ordered endpoint waits for the one before (delivered, or given up on), which asks for it then. */
  abstract wait(deliveryId: string): Promise<void>;
  /**
   * Records the attempt and, when the delivery is still as it was loaded (no other attempt or
   * redelivery ended meanwhile), its new state; asks for the next attempt when there is one;
   * disables the endpoint (with its `webhook_endpoint.disabled` event) when told to; and asks for the
   * resource's next waiting delivery once this one is over. One transaction.
   */
  abstract finish(delivery: DueDelivery, attempt: AttemptRecord, ending: DeliveryEnding): Promise<void>;
}

export interface TransportAnswer {
  readonly status?: number;
  readonly response?: string;
  readonly retryAfter?: string | null;
  readonly latencyMs: number;
  readonly failure?: string;
}

/** Sends a signed delivery: one POST, no redirect followed, to an address allowed (checked as it connects). */
export abstract class WebhookTransport {
  abstract post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<TransportAnswer>;
}

/** The Standard Webhooks headers of a delivery: `webhook-signature` with a `v1` per secret and a `v1a`. */
export abstract class WebhookSigner {
  abstract headers(id: string, timestamp: Date, body: string, secrets: readonly string[]): Promise<Record<string, string>>;
}
