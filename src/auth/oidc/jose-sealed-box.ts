import { CompactEncrypt, compactDecrypt } from 'jose';
import { SealedBox } from '../domain/browser-session.ports';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Secrets at rest as JWE (RFC 7516) with a direct key and AES-256-GCM, through jose (the service's
 * one JOSE library). The context is a member of the protected header, which GCM authenticates: a
 * value sealed for one session does not open as another's, even if the rows are swapped.
 */
export class JoseSealedBox extends SealedBox {
  constructor(private readonly key: Uint8Array) {
    super();
    if (key.length !== 32) throw new Error('The sealing key must be 32 bytes');
  }

  seal(value: object, context: string): Promise<string> {
    return new CompactEncrypt(encoder.encode(JSON.stringify(value))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', ctx: context }).encrypt(this.key);
  }

  async open<T>(sealed: string, context: string): Promise<T> {
    const { plaintext, protectedHeader } = await compactDecrypt(sealed, this.key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    if (protectedHeader.ctx !== context) throw new Error('The sealed value belongs to another context');
    return JSON.parse(decoder.decode(plaintext)) as T;
  }
}
