import { createPublicKey, KeyObject } from 'node:crypto';
import { pemText } from './pem-text';

export interface UpstreamPublicKey {
  /** The PEM text, surrounding whitespace trimmed: what the Signature is computed over. */
  readonly pem: string;
  readonly key: KeyObject;
}

/**
 * UPSTREAM_PUBLIC_KEY holds the PEM text itself or the path of a PEM file. A one-line value with
 * literal `\n` escapes (common in .env files and secret stores) means the PEM with real newlines.
 * Throws with a reason (never the key) when it is unreadable, not PEM, or not an RSA key of at
 * least 2048 bits.
 */
export function readUpstreamPublicKey(value: string): UpstreamPublicKey {
  const text = pemText(value);
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch (error) {
    throw new Error('is not a PEM-encoded public key', { cause: error });
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('must be an RSA public key (RSA-OAEP-256)');
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new Error(`must be an RSA key of at least 2048 bits (got ${bits})`);
  return { pem: text, key };
}
