import type { KeyObject } from 'node:crypto';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
}

/** The Ed25519 keys `v1a` signatures are made with: the current one, and the public key set partners verify with. */
export abstract class WebhookSigningKeys {
  abstract current(): Promise<SigningKey>;
  /** The public keys as a JWKS (RFC 7517). */
  abstract publicKeys(): Promise<{ keys: Record<string, unknown>[] }>;
}
