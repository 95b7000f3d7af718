import { compactVerify, createLocalJWKSet, errors, type JSONWebKeySet } from 'jose';

/**
 * Checking the gateway's receipts and proofs offline: once you hold the audit keys
 * (`/.well-known/audit-keys.json`) and a receipt or proof, nothing here calls the gateway.
 *
 * - A receipt (the `Audit-Receipt` header of a write's answer) is a compact JWS signed with an audit
 *   key: that the gateway recorded the outcome it answered, as the audit event it names.
 * - An inclusion proof (`GET /api/v1/receipts/{event_id}`) shows that a checkpoint signed with an
 *   audit key holds that event (RFC 9162's Merkle tree), so it can no longer be changed or removed
 *   unseen.
 */

/** What a check can find wrong. */
export type ReceiptFailure =
  /** Not a receipt or proof of the gateway's shape. */
  | 'format'
  /** No key in the set has the `kid` it names. */
  | 'key'
  /** The receipt's signature is not the key's over its contents. */
  | 'signature'
  /** The proof is of another event, or of another hash, than the receipt names. */
  | 'event_hash'
  /** The checkpoint's signature is not the key's over its statement. */
  | 'checkpoint_signature'
  /** The checkpoint is not a seal with a Merkle tree, or not of the tree the proof climbs (root, size). */
  | 'checkpoint'
  /** The inclusion path does not lead from the event to the checkpoint's root. */
  | 'path';

export class ReceiptVerificationError extends Error {
  constructor(
    readonly failed: ReceiptFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ReceiptVerificationError';
  }
}

/** The audit keys as `/.well-known/audit-keys.json` publishes them: keep them, and add new ones as they appear. */
export type AuditKeySet = JSONWebKeySet;

/** What a receipt says. */
export interface ReceiptClaims {
  readonly v: number;
  /** The audit event that recorded the answer: ask for its inclusion proof by this id. */
  readonly event_id: string;
  /** Its hash as the audit log seals it, hex. */
  readonly event_hash: string;
  readonly occurred_at: string;
  readonly request_id: string;
  readonly operation: string;
  /** succeeded, rejected, failed or unknown. */
  readonly outcome: string;
  readonly http_status: number | null;
  readonly reference: string | null;
  readonly customer_id: string | null;
}

/** The answer of `GET /api/v1/receipts/{event_id}` once the event is sealed. */
export interface InclusionProof {
  readonly event_id: string;
  readonly event_hash: string;
  readonly leaf_index: number;
  readonly tree_size: number;
  readonly inclusion_proof: readonly string[];
  readonly merkle_root: string;
  readonly checkpoint: { readonly seq: number; readonly statement: string; readonly head: string; readonly key_id: string; readonly signature: string };
}

const RECEIPT_TYPE = 'audit-receipt+jws';

/**
 * Checks a receipt's signature against the keys and gives what it says.
 * @throws ReceiptVerificationError naming what failed: `format`, `key` or `signature`.
 */
export async function verifyReceipt(receipt: string, keys: AuditKeySet): Promise<ReceiptClaims> {
  let verified: Awaited<ReturnType<typeof compactVerify>>;
  try {
    verified = await compactVerify(receipt, createLocalJWKSet(keys), { algorithms: ['EdDSA', 'Ed25519'] });
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) throw new ReceiptVerificationError('key', 'No audit key in the set has the receipt’s kid');
    if (error instanceof errors.JWSSignatureVerificationFailed) throw new ReceiptVerificationError('signature', 'The receipt’s signature does not verify');
    throw new ReceiptVerificationError('format', `Not a receipt: ${(error as Error).message}`);
  }
  if (verified.protectedHeader.typ !== RECEIPT_TYPE) throw new ReceiptVerificationError('format', `Not a receipt: its typ is not ${RECEIPT_TYPE}`);
  try {
    const claims = JSON.parse(new TextDecoder().decode(verified.payload)) as ReceiptClaims;
    if (typeof claims.event_id !== 'string' || !/^[0-9a-f]{64}$/.test(String(claims.event_hash))) throw new Error('no event id or hash');
    return claims;
  } catch (error) {
    throw new ReceiptVerificationError('format', `Not a receipt: ${(error as Error).message}`);
  }
}

/**
 * Checks that a signed checkpoint holds an event: the checkpoint's signature against the keys,
 * that its statement is a seal whose Merkle tree is the one the proof climbs, and the RFC 9162
 * inclusion path from the event's leaf to that root. With the receipt's claims, also that the proof
 * is of the event and hash the receipt names.
 * @throws ReceiptVerificationError naming what failed.
 */
export async function verifyInclusion(proof: InclusionProof, keys: AuditKeySet, receipt?: ReceiptClaims): Promise<void> {
  if (receipt && (receipt.event_id !== proof.event_id || receipt.event_hash !== proof.event_hash)) {
    throw new ReceiptVerificationError('event_hash', 'The proof is not of the event the receipt names');
  }
  const { checkpoint } = proof;
  const jwk = keys.keys.find((key) => key.kid === checkpoint.key_id);
  if (!jwk) throw new ReceiptVerificationError('key', `No audit key in the set has the checkpoint’s key id ${checkpoint.key_id}`);
  if (!(await checkpointSignatureHolds(checkpoint.statement, checkpoint.signature, jwk))) {
    throw new ReceiptVerificationError('checkpoint_signature', `Checkpoint #${checkpoint.seq}’s signature does not verify`);
  }
  let statement: { v?: unknown; kind?: unknown; merkle_root?: unknown; events?: unknown };
  try {
    statement = JSON.parse(checkpoint.statement) as typeof statement;
  } catch {
    throw new ReceiptVerificationError('checkpoint', 'The checkpoint’s statement is not JSON');
  }
  if (typeof statement.v !== 'number' || statement.v < 2 || statement.kind !== 'seal') {
    throw new ReceiptVerificationError('checkpoint', 'The checkpoint is not a seal with a Merkle tree');
  }
  if (statement.merkle_root !== proof.merkle_root || statement.events !== proof.tree_size) {
    throw new ReceiptVerificationError('checkpoint', 'The proof climbs another tree than the checkpoint signed (its root or size differ)');
  }
  if (!/^[0-9a-f]{64}$/.test(proof.event_hash) || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(proof.event_id)) {
    throw new ReceiptVerificationError('format', 'The proof’s event id or hash is malformed');
  }
  // The leaf is the checkpoint's manifest entry: the event id's 16 bytes, then its hash.
  const leaf = await sha256(new Uint8Array([0]), hexBytes(proof.event_id.replace(/-/g, '')), hexBytes(proof.event_hash));
  const root = await rootFromInclusionPath(
    leaf,
    proof.leaf_index,
    proof.tree_size,
    proof.inclusion_proof.map((hex) => hexBytes(hex)),
  );
  if (root === undefined || hexOf(root) !== proof.merkle_root) {
    throw new ReceiptVerificationError('path', 'The inclusion path does not lead to the checkpoint’s Merkle root');
  }
}

/** RFC 9162 2.1.3.2: the root an inclusion path leads to, or undefined when the path does not fit the tree's size. */
async function rootFromInclusionPath(leaf: Uint8Array, index: number, size: number, path: readonly Uint8Array[]): Promise<Uint8Array | undefined> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(new Uint8Array([1]), p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await sha256(new Uint8Array([1]), r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

async function checkpointSignatureHolds(statement: string, signature: string, jwk: AuditKeySet['keys'][number]): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, base64Bytes(signature), new TextEncoder().encode(statement));
  } catch {
    return false;
  }
}

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', joined));
}

function hexBytes(hex: string): Uint8Array {
  if (!/^(?:[0-9a-f]{2})*$/.test(hex)) throw new ReceiptVerificationError('format', 'A hash is not hex');
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function hexOf(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function base64Bytes(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
