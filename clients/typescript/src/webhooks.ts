import { importJWK, type JWK } from 'jose';
import { Webhook } from 'standardwebhooks';
import type { components } from './schema.js';

/** What each event's `data` holds (docs/events.md, "Catalogue"), by its type. */
export interface EventData {
  'customer.created': { id: string; end_user: string | null; origin: 'created' | 'linked' };
  'customer.assigned': { id: string; end_user: string };
  'bank_account.created': { id: string; customer_id: string; currency: 'EUR' | 'GBP'; status: string };
  'request.outcome_unknown': {
    operation: 'customer.create' | 'bank_account.create';
    reference: string;
    request_id: string;
    customer_id: string | null;
    error_id: string | null;
  };
  'webhook_endpoint.disabled': { id: string; reason: 'gone' | 'failing' };
}

export type EventType = keyof EventData;

/** An event, typed by its `type`: as GET /api/v1/events answers it, and as a webhook delivers it (with `timestamp`). */
export type GatewayEvent = {
  [T in EventType]: Omit<components['schemas']['Event'], 'type' | 'data'> & {
    type: T;
    data: EventData[T];
    /** In a delivery: the endpoint it is for, and when it was signed. */
    endpoint_id?: string;
    timestamp?: string;
  };
}[EventType];

/** Why a delivery was not verified. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * How a delivery is verified: the endpoint's secret (`v1`, HMAC-SHA256), or the gateway's published
 * keys (`v1a`, Ed25519) with the endpoint's id. The keys are the gateway's, the same for every
 * partner: only the signed `endpoint_id` tells a delivery meant for your endpoint from one another
 * partner received and sent on to you.
 */
export type WebhookVerification =
  { readonly secret: string; readonly endpointId?: string } | { readonly keys: { readonly keys: readonly JWK[] }; readonly endpointId: string };

/** How far a delivery's `webhook-timestamp` may be from now, either way: Standard Webhooks' tolerance. */
const TOLERANCE_SECONDS = 5 * 60;

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string {
  const value =
    typeof (headers as { get?: unknown }).get === 'function'
      ? (headers as { get(name: string): string | null }).get(name)
      : (headers as Record<string, unknown>)[name];
  const text: unknown = Array.isArray(value) ? (value as unknown[])[0] : value;
  if (typeof text !== 'string' || text === '') throw new WebhookVerificationError(`the ${name} header is missing`);
  return text;
}

/**
 * Verifies a delivery in one call and returns its event, typed: the body exactly as received (before
 * any JSON parsing), its headers, and the endpoint's secret or the key set of GET
 * /api/v1/webhooks/jwks. Refuses a signature that does not verify, and a timestamp more than 5
 * minutes away. Skip an event whose `id` you have handled already: deliveries are at least once.
 * @throws WebhookVerificationError
 */
export async function verifyWebhook(body: string, headers: Headers, verification: WebhookVerification): Promise<GatewayEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if ('secret' in verification) {
    try {
      new Webhook(verification.secret).verify(body, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures });
    } catch (error) {
      throw new WebhookVerificationError((error as Error).message);
    }
  } else {
    const seconds = Number(timestamp);
    if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - seconds) > TOLERANCE_SECONDS)
      throw new WebhookVerificationError('the timestamp is too far from now');
    const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
    const candidates = signatures
      .split(' ')
      .filter((part) => part.startsWith('v1a,'))
      .map((part) => Uint8Array.from(atob(part.slice(4)), (c) => c.charCodeAt(0)));
    let verified = false;
    for (const jwk of verification.keys.keys) {
      const key = (await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA')) as Parameters<typeof crypto.subtle.verify>[1];
      for (const signature of candidates) if (await crypto.subtle.verify('Ed25519', key, signature, signed)) verified = true;
    }
    if (!verified) throw new WebhookVerificationError('no v1a signature verifies with the published keys');
  }
  const event = JSON.parse(body) as GatewayEvent;
  if (verification.endpointId !== undefined && event.endpoint_id !== verification.endpointId) {
    throw new WebhookVerificationError('the delivery is for another endpoint');
  }
  return event;
}
