import type { KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, CompactEncrypt } from 'jose';

/** Turns a POST payload into the body the provider receives. The one place that encrypts. */
export abstract class PayloadCipher {
  abstract seal(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export const JWE_ALGORITHM = 'RSA-OAEP-256';
export const JWE_ENCRYPTION = 'A256GCM';

/**
 * `{ "data": "<compact JWE>" }` (RFC 7516 §7.1), made by jose: RSA-OAEP-256 key wrapping, A256GCM
 * content encryption (a fresh content key and IV for each payload), `kid` the RFC 7638 thumbprint
 * of the provider's key. Only the making is here, never the opening of anything received.
 */
export class JwePayloadCipher extends PayloadCipher {
  /** The protected header, once the key's thumbprint is known (jose computes it asynchronously). */
  private readonly header: Promise<{ alg: string; enc: string; kid: string; cty: string }>;

  constructor(private readonly publicKey: KeyObject) {
    super();
    if (publicKey.asymmetricKeyType !== 'rsa') throw new Error('The provider key must be an RSA public key (RSA-OAEP-256)');
    if ((publicKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) throw new Error('The provider key must be an RSA key of at least 2048 bits');
    this.header = calculateJwkThumbprint(publicKey.export({ format: 'jwk' }), 'sha256').then((kid) => ({
      alg: JWE_ALGORITHM,
      enc: JWE_ENCRYPTION,
      kid,
      cty: 'application/json',
    }));
    // A key jose cannot take fails its first seal; the start does not wait for it.
    this.header.catch(() => undefined);
  }

  async seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const data = await new CompactEncrypt(Buffer.from(JSON.stringify(payload), 'utf8')).setProtectedHeader(await this.header).encrypt(this.publicKey);
    return { data };
  }
}

/** For providers that take the JSON itself (UPSTREAM_ENCRYPTION=none). */
export class PlainPayloadCipher extends PayloadCipher {
  seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    return Promise.resolve(payload);
  }
}
