import { KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, CompactEncrypt, importJWK, JWK } from 'jose';

/** Turns a POST payload into the body the provider receives. The one place that encrypts. */
export abstract class PayloadCipher {
  abstract seal(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export const JWE_ALGORITHM = 'RSA-OAEP-256';
export const JWE_ENCRYPTION = 'A256GCM';

/**
 * `{ "data": "<compact JWE>" }`: RSA-OAEP-256 key wrapping, A256GCM content encryption, `kid` the
 * RFC 7638 thumbprint of the provider's key. The key is imported once, not per call.
 */
export class JwePayloadCipher extends PayloadCipher {
  private readonly prepared: Promise<{ key: Awaited<ReturnType<typeof importJWK>>; kid: string }>;

  constructor(publicKey: KeyObject) {
    super();
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    this.prepared = Promise.all([importJWK(jwk, JWE_ALGORITHM), calculateJwkThumbprint(jwk, 'sha256')]).then(([key, kid]) => ({ key, kid }));
    this.prepared.catch(() => undefined); // surfaced on first use
  }

  async seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { key, kid } = await this.prepared;
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: JWE_ALGORITHM, enc: JWE_ENCRYPTION, kid, cty: 'application/json' })
      .encrypt(key);
    return { data: jwe };
  }
}

/** For providers that take the JSON itself (UPSTREAM_ENCRYPTION=none). */
export class PlainPayloadCipher extends PayloadCipher {
  seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    return Promise.resolve(payload);
  }
}
