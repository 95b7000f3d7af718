import { createHash } from 'node:crypto';

/**
 * The provider's Signature header: lowercase hex SHA-256 of the UTF-8 string public key + reference,
 * the key as configured with surrounding whitespace trimmed. The one place that signs.
 */
export class RequestSigner {
  private readonly key: string;

  constructor(publicKeyPem: string) {
    this.key = publicKeyPem.trim();
  }

  sign(reference: string): string {
    return createHash('sha256')
      .update(this.key + reference, 'utf8')
      .digest('hex');
  }
}
