import { createHmac, createSecretKey, KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * End users whose ids are remembered: as many as the access tokens verified and remembered. A search
 * by an end user's subject (the audit log's, the customers') is remembered too: under 1 KB an entry,
 * and an end user pushed out is only computed again.
 */
const REMEMBERED_END_USERS = 10_000;

/**
 * What the service knows an end user by: HMAC-SHA256 under END_USER_PSEUDONYM_KEY of their issuer
 * and subject, shaped as a UUID (version 8, RFC 9562: its 122 free bits are the hash's first).
 * The same person always gets the same id, on every replica; without the key, the id says nothing
 * about who they are. The audit log, the idempotency store and customer ownership hold this id
 * and never the subject. An id once made is remembered: every request with an end user's token or
 * session asks for one, and its HMAC was the largest part of naming such a caller (docs/benchmarks.md).
 */
export class Pseudonyms {
  /**
   * The key made a KeyObject once: Node 24's createHmac given the raw bytes imports them again on
   * every call, 28–38 µs of CPU against 4–6 µs with a KeyObject (docs/benchmarks.md), and every
   * request with an end user's token asks for a pseudonym.
   */
  private readonly key: KeyObject;

  private readonly remembered = new LRUCache<string, string>({ max: REMEMBERED_END_USERS });

  constructor(key: Buffer) {
    this.key = createSecretKey(key);
  }

  of(issuer: string, subject: string): string {
    // JSON keeps the two apart: no issuer and subject pair runs into another.
    const named = JSON.stringify([issuer, subject]);
    let id = this.remembered.get(named);
    if (id === undefined) {
      id = this.idOf(named);
      this.remembered.set(named, id);
    }
    return id;
  }

  private idOf(named: string): string {
    const bytes = createHmac('sha256', this.key).update(named, 'utf8').digest().subarray(0, 16);
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
