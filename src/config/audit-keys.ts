import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { pemText } from './pem-text';

/**
 * AUDIT_SIGNING_KEY and AUDIT_PUBLIC_KEYS hold PEM text or the path of a PEM file, as the upstream
 * key does (pem-text.ts). Errors give a reason, never the key.
 */

/** The Ed25519 private key that signs audit checkpoints. */
export function readAuditSigningKey(value: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pemText(value));
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('is neither')) throw error;
    throw new Error('is not a PEM-encoded private key', { cause: error });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('must be an Ed25519 private key');
  return key;
}

/** Retired audit public keys, kept so that checkpoints they signed still verify: one or more PEM blocks. */
export function readAuditPublicKeys(value: string): KeyObject[] {
  const blocks = pemText(value).match(/-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g) ?? [];
  if (blocks.length === 0) throw new Error('holds no PEM public key');
  return blocks.map((block) => {
    const key = createPublicKey(block);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('must hold Ed25519 public keys only');
    return key;
  });
}
