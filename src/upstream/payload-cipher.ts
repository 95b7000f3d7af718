import { constants, createCipheriv, createSecretKey, KeyObject, publicEncrypt, randomBytes } from 'node:crypto';
import { thumbprintOf } from '../common/crypto/jwk-thumbprint';

/** Turns a POST payload into the body the provider receives. The one place that encrypts. */
export abstract class PayloadCipher {
  abstract seal(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export const JWE_ALGORITHM = 'RSA-OAEP-256';
export const JWE_ENCRYPTION = 'A256GCM';

/**
 * `{ "data": "<compact JWE>" }` (RFC 7516 §7.1): RSA-OAEP-256 key wrapping, A256GCM content
 * encryption, `kid` the RFC 7638 thumbprint of the provider's key.
 *
 * Made with node:crypto's one-shot calls, not jose: jose runs on WebCrypto, where each of the two
 * operations is a job on the thread pool behind WebIDL checks, and a seal cost about four times
 * the CPU (docs/decisions.md, "Making JOSE objects with node:crypto"). Only the making is here,
 * never the opening of anything received; the tests hold every seal to jose's `compactDecrypt`.
 */
export class JwePayloadCipher extends PayloadCipher {
  private readonly encodedHeader: string;
  /** publicEncrypt's options, made once: OAEP's hash can be named only here. */
  private readonly keyWrap: { key: KeyObject; padding: number; oaepHash: string };
  /** RFC 7516 §5.1 step 14: the additional authenticated data is the ASCII of the encoded header. */
  private readonly aad: Buffer;

  constructor(publicKey: KeyObject) {
    super();
    if (publicKey.asymmetricKeyType !== 'rsa') throw new Error('The provider key must be an RSA public key (RSA-OAEP-256)');
    if ((publicKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) throw new Error('The provider key must be an RSA key of at least 2048 bits');
    const kid = thumbprintOf(publicKey.export({ format: 'jwk' }));
    if (kid === undefined) throw new Error('The provider key has no RFC 7638 thumbprint');
    const header = { alg: JWE_ALGORITHM, enc: JWE_ENCRYPTION, kid, cty: 'application/json' };
    this.encodedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
    this.aad = Buffer.from(this.encodedHeader, 'ascii');
    this.keyWrap = { key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' };
  }

  seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    // What the encryption throws rejects the promise, as the port's callers expect.
    return new Promise((resolve) => resolve({ data: this.compact(payload) }));
  }

  private compact(payload: Record<string, unknown>): string {
    // A fresh 256-bit content key and 96-bit IV for each payload (RFC 7518 §5.3).
    const contentKey = randomBytes(32);
    const iv = randomBytes(12);
    const encryptedKey = publicEncrypt(this.keyWrap, contentKey);
    // The content key made a KeyObject first: given the raw bytes, Node 24's createCipheriv asks
    // whether they are a KeyObject, then a CryptoKey, and each answer is a thrown and caught error
    // (half the AES step's CPU). publicEncrypt cannot be spared the same two checks: OAEP's hash is
    // named only in its options object (keyWrap), which is checked the same way.
    const cipher = createCipheriv('aes-256-gcm', createSecretKey(contentKey), iv);
    cipher.setAAD(this.aad);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    return [
      this.encodedHeader,
      encryptedKey.toString('base64url'),
      iv.toString('base64url'),
      ciphertext.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }
}

/** For providers that take the JSON itself (UPSTREAM_ENCRYPTION=none). */
export class PlainPayloadCipher extends PayloadCipher {
  seal(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    return Promise.resolve(payload);
  }
}
