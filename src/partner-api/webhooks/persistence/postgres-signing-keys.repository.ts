import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { Sql } from '../../../database/sql';
import { SigningKey, WebhookSigningKeys } from '../domain/signing-keys.port';

/** An arbitrary constant: the lock under which the first signer makes the key, so that every process signs with the same one. */
const KEY_MADE_LOCK = 7_204_118_601;

/**
 * The `v1a` signing key: made by the first process that signs, kept sealed under DATA_KEY in the
 * database (so every replica and worker signs with the same key, and nothing new has to be
 * configured), its public half published as a JWKS at GET /api/v1/webhooks/jwks.
 */
@Injectable()
export class PostgresWebhookSigningKeys extends WebhookSigningKeys {
  private key?: Promise<SigningKey>;

  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
  ) {
    super();
  }

  current(): Promise<SigningKey> {
    this.key ??= this.load().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  async publicKeys(): Promise<{ keys: Record<string, unknown>[] }> {
    await this.current();
    const rows = await this.sql.query<{ public_jwk: Record<string, unknown> }>(`SELECT public_jwk FROM webhook_signing_keys ORDER BY created_at DESC`, []);
    return { keys: rows.map((row) => row.public_jwk) };
  }

  private async load(): Promise<SigningKey> {
    const [row] = await this.sql.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock($1)', [KEY_MADE_LOCK]);
      const found = await query<{ kid: string; private_key: string }>(`SELECT kid, private_key FROM webhook_signing_keys ORDER BY created_at DESC LIMIT 1`);
      if (found.length > 0) return found;
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const jwk = await exportJWK(publicKey);
      const kid = await calculateJwkThumbprint(jwk);
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const sealed = await this.box.seal({ pem }, `webhook_signing_key:${kid}`);
      await query(`INSERT INTO webhook_signing_keys (kid, private_key, secret_key, public_jwk) VALUES ($1, $2, $3, $4)`, [
        kid,
        sealed,
        this.box.keyId,
        { ...jwk, kid, alg: 'EdDSA', use: 'sig' },
      ]);
      return [{ kid, private_key: sealed }];
    });
    const { pem } = await this.box.open<{ pem: string }>(row.private_key, `webhook_signing_key:${row.kid}`);
    const privateKey = createPrivateKey(pem);
    // Checked once: the public key partners verify with is this key's.
    createPublicKey(privateKey);
    return { kid: row.kid, privateKey };
  }
}
