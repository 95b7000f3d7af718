import { sign as ed25519Sign } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { WebhookSigner } from '../domain/delivery.ports';
import { WebhookSigningKeys } from '../domain/signing-keys.port';

/**
 * The Standard Webhooks signature of a delivery: a `v1` (HMAC-SHA256) per secret the endpoint has
 * (two through a rotation's overlap), signed by the `standardwebhooks` library, and a `v1a`
 * (Ed25519 over the same `id.timestamp.body`, by Node's own crypto) that anyone can check against the
 * published key set, without a shared secret.
 */
@Injectable()
export class StandardWebhooksSigner extends WebhookSigner {
  constructor(private readonly keys: WebhookSigningKeys) {
    super();
  }

  async headers(id: string, timestamp: Date, body: string, secrets: readonly string[]): Promise<Record<string, string>> {
    const signatures = secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body));
    const key = await this.keys.current();
    const seconds = Math.floor(timestamp.getTime() / 1000);
    const asymmetric = ed25519Sign(null, Buffer.from(`${id}.${seconds}.${body}`, 'utf8'), key.privateKey).toString('base64');
    return {
      'webhook-id': id,
      'webhook-timestamp': String(seconds),
      'webhook-signature': [...signatures, `v1a,${asymmetric}`].join(' '),
    };
  }
}
