import { createHash } from 'node:crypto';
import { CompactEncrypt, compactDecrypt, type CryptoKey, decodeProtectedHeader } from 'jose';
import { SealedBox } from '../domain/sealed-box.port';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A key's id in the protected header: the first 8 bytes of its SHA-256, hex (names the key, reveals nothing of it). */
function keyIdOf(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** The `kid` of a sealed value's protected header, unverified (it only chooses which key to try). */
function sealedKeyId(sealed: string): string | undefined {
  try {
    return decodeProtectedHeader(sealed).kid;
  } catch {
    return undefined;
  }
}

/**
 * Secrets at rest as JWE (RFC 7516) with a direct key and AES-256-GCM, through jose (the service's
 * one JOSE library). The context is a member of the protected header, which GCM authenticates: a
 * value sealed for one session (or one row) does not open as another's, even if the rows are swapped.
 *
 * Sealed with the first key, named by `kid`; opened with the key the `kid` names, among the first
 * and the previous ones (SESSION_KEY and SESSION_PREVIOUS_KEYS; DATA_KEY and DATA_PREVIOUS_KEYS),
 * so that a new key ends no session and loses no data: what was sealed under a previous key is
 * sealed again under the new one (a session at its next renewal, a bank account at the next start).
 */
export class JoseSealedBox extends SealedBox {
  private readonly keys: ReadonlyMap<string, Uint8Array>;
  private readonly currentId: string;
  /**
   * Each key imported once as a Web Crypto key (AES-GCM, encrypt and decrypt), which jose takes as
   * it is: given the bytes, it imports them again for every value, which cost a sealed value more
   * than its encryption (docs/benchmarks.md, "Sealing partners' data").
   */
  private readonly imported = new Map<string, Promise<CryptoKey>>();

  /** The `kid` values are sealed under from now on. */
  get keyId(): string {
    return this.currentId;
  }

  constructor(key: Uint8Array, previous: readonly Uint8Array[] = []) {
    super();
    for (const k of [key, ...previous]) if (k.length !== 32) throw new Error('The sealing key must be 32 bytes');
    this.currentId = keyIdOf(key);
    this.keys = new Map([...previous.map((k) => [keyIdOf(k), k] as const), [this.currentId, key]]);
  }

  /** The ids of the keys this service had before the current one (DATA_PREVIOUS_KEYS): what is sealed under them is sealed again. */
  get previousKeyIds(): string[] {
    return [...this.keys.keys()].filter((id) => id !== this.currentId);
  }

  async seal(value: object, context: string): Promise<string> {
    return new CompactEncrypt(encoder.encode(JSON.stringify(value)))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: this.currentId, ctx: context })
      .encrypt(await this.cryptoKey(this.currentId));
  }

  private cryptoKey(id: string): Promise<CryptoKey> {
    let key = this.imported.get(id);
    if (!key) {
      key = crypto.subtle.importKey('raw', this.keys.get(id)!, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
      this.imported.set(id, key);
    }
    return key;
  }

  async open<T>(sealed: string, context: string): Promise<T> {
    // Sealed before keys had ids: each key in turn, the current one first.
    const kid = sealedKeyId(sealed);
    const candidates = kid === undefined ? [...this.keys.keys()].reverse() : [kid];
    let last: unknown;
    for (const id of candidates) {
      if (!this.keys.has(id)) throw new Error('The sealed value names a key this service does not have');
      try {
        const { plaintext, protectedHeader } = await compactDecrypt(sealed, await this.cryptoKey(id), {
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256GCM'],
        });
        if (protectedHeader.ctx !== context) throw new Error('The sealed value belongs to another context');
        return JSON.parse(decoder.decode(plaintext)) as T;
      } catch (error) {
        last = error;
      }
    }
    throw last;
  }
}
