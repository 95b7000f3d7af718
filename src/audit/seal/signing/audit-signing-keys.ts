import { createHash, createPublicKey, generateKeyPairSync, KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { CompactSign } from 'jose';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAuditPublicKeys, readAuditSigningKey } from '../../../config/audit-keys';
import { CheckpointSigner, TrustedKeys } from '../domain/audit-seal.port';
import { RECEIPT_TYPE, ReceiptClaims } from '../domain/receipt';

/** Where the signing key is kept when AUDIT_SIGNING_KEY is not set. */
export function defaultSigningKeyFile(dataDir: string): string {
  return join(dataDir, 'audit-signing-key.pem');
}

/** A key's id: the first 16 hex digits of SHA-256 over its public half (SPKI DER). */
export function keyIdOf(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

export interface AuditKeySettings {
  readonly AUDIT_SIGNING_KEY?: string;
  readonly AUDIT_PUBLIC_KEYS?: string;
  readonly DATA_DIR: string;
}

/** Ed25519 with node:crypto: the service signs checkpoints, verify checks them. */
export class Ed25519CheckpointSigner extends CheckpointSigner {
  readonly keyId: string;
  readonly publicKey: KeyObject;

  constructor(private readonly key: KeyObject) {
    super();
    this.keyId = keyIdOf(key);
    this.publicKey = createPublicKey(key);
  }

  sign(statement: string): string {
    return sign(null, Buffer.from(statement, 'utf8'), this.key).toString('base64');
  }

  /**
   * A compact JWS (RFC 7515 §7.1) over the claims, Ed25519 (RFC 8037), made by jose. Ed25519
   * signatures are deterministic, so the same claims under the same key make the same receipt.
   */
  async signReceipt(claims: ReceiptClaims): Promise<string> {
    return new CompactSign(Buffer.from(JSON.stringify(claims), 'utf8')).setProtectedHeader({ alg: 'EdDSA', kid: this.keyId, typ: RECEIPT_TYPE }).sign(this.key);
  }
}

export class Ed25519TrustedKeys extends TrustedKeys {
  private readonly byId: Map<string, KeyObject>;

  constructor(keys: readonly KeyObject[]) {
    super();
    this.byId = new Map(keys.map((key) => [keyIdOf(key), key.type === 'private' ? createPublicKey(key) : key]));
  }

  get keyIds(): readonly string[] {
    return [...this.byId.keys()];
  }

  publicJwks(): readonly Record<string, string>[] {
    return [...this.byId].map(([kid, key]) => {
      const { kty, crv, x } = key.export({ format: 'jwk' });
      return { kty: String(kty), crv: String(crv), x: String(x), kid, alg: 'EdDSA', use: 'sig' };
    });
  }

  verify(keyId: string, statement: string, signature: string): boolean | undefined {
    const key = this.byId.get(keyId);
    if (!key) return undefined;
    return verify(null, Buffer.from(statement, 'utf8'), key, Buffer.from(signature, 'base64'));
  }
}

/** No signing key to be had: a command never makes one (its checkpoints would stop every replica's sealer). */
export class NoAuditSigningKey extends Error {
  constructor(file: string) {
    super(
      `No audit signing key: AUDIT_SIGNING_KEY is not set and ${file} does not exist. Set AUDIT_SIGNING_KEY to the key the service signs with ` +
        '(a command never makes one: checkpoints signed with a new key would stop every replica’s sealer)',
    );
    this.name = 'NoAuditSigningKey';
  }
}

/**
 * The signing key: AUDIT_SIGNING_KEY, else the one kept under DATA_DIR, made (mode 600) when there
 * is none yet and `make` allows it (the service in development; never a command, never production,
 * whose configuration requires AUDIT_SIGNING_KEY). Two processes starting at once make one key: the
 * second reads the first's file.
 */
export function loadSigningKey(settings: AuditKeySettings, { make }: { make: boolean }): { key: KeyObject; generated?: string } {
  if (settings.AUDIT_SIGNING_KEY) return { key: readAuditSigningKey(settings.AUDIT_SIGNING_KEY) };
  const file = defaultSigningKeyFile(settings.DATA_DIR);
  try {
    return { key: readAuditSigningKey(file) };
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== 'ENOENT') throw new Error(`${file} ${(error as Error).message}`, { cause: error });
  }
  if (!make) throw new NoAuditSigningKey(file);
  mkdirSync(settings.DATA_DIR, { recursive: true });
  const { privateKey } = generateKeyPairSync('ed25519');
  // Written whole under another name, then linked into place: a process starting beside this one
  // finds either no key or a whole one, and the first link wins.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: readAuditSigningKey(readFileSync(file, 'utf8')) };
  } finally {
    unlinkSync(draft);
  }
  return { key: privateKey, generated: file };
}

/**
 * What verify trusts: the signing key's public half (AUDIT_SIGNING_KEY, or the one under DATA_DIR
 * when it exists; verify never makes one) and AUDIT_PUBLIC_KEYS.
 */
export function loadTrustedKeys(settings: AuditKeySettings): Ed25519TrustedKeys {
  const keys: KeyObject[] = [];
  if (settings.AUDIT_SIGNING_KEY) {
    keys.push(readAuditSigningKey(settings.AUDIT_SIGNING_KEY));
  } else {
    try {
      keys.push(readAuditSigningKey(defaultSigningKeyFile(settings.DATA_DIR)));
    } catch {
      // No key under DATA_DIR: only AUDIT_PUBLIC_KEYS are trusted.
    }
  }
  if (settings.AUDIT_PUBLIC_KEYS) keys.push(...readAuditPublicKeys(settings.AUDIT_PUBLIC_KEYS));
  return new Ed25519TrustedKeys(keys);
}
