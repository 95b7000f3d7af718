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
  /** The inclusion path does not lead from the event (or the earlier checkpoint) to the checkpoint's root. */
  | 'path'
  /** The consistency proof does not show the earlier checkpoint's tree to be the start of the later one's. */
  | 'consistency';

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

/** A checkpoint of the audit log as the gateway signed it: keep the ones your proofs come with. */
export interface SignedCheckpoint {
  readonly seq: number;
  /** The JSON text that was signed. */
  readonly statement: string;
  readonly head: string;
  readonly key_id: string;
  readonly signature: string;
}

/** The answer of `GET /api/v1/receipts/{event_id}` once the event is sealed. */
export interface InclusionProof {
  readonly event_id: string;
  readonly event_hash: string;
  readonly leaf_index: number;
  readonly tree_size: number;
  readonly inclusion_proof: readonly string[];
  readonly merkle_root: string;
  readonly checkpoint: SignedCheckpoint;
}

/** The answer of `GET /api/v1/checkpoints/consistency?from=&to=`. */
export interface ConsistencyProof {
  readonly from: SignedCheckpoint;
  readonly to: SignedCheckpoint;
  readonly consistency_proof: readonly string[];
  readonly inclusion_proof: readonly string[];
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
  let claims: ReceiptClaims;
  try {
    claims = JSON.parse(new TextDecoder().decode(verified.payload)) as ReceiptClaims;
  } catch (error) {
    throw new ReceiptVerificationError('format', `Not a receipt: ${(error as Error).message}`);
  }
  const text = (value: unknown) => typeof value === 'string';
  const textOrNull = (value: unknown) => value === null || typeof value === 'string';
  if (
    typeof claims !== 'object' ||
    claims === null ||
    claims.v !== 1 ||
    !UUID.test(String(claims.event_id)) ||
    !HASH.test(String(claims.event_hash)) ||
    ![claims.occurred_at, claims.request_id, claims.operation, claims.outcome].every(text) ||
    !(claims.http_status === null || Number.isSafeInteger(claims.http_status)) ||
    ![claims.reference, claims.customer_id].every(textOrNull)
  ) {
    throw new ReceiptVerificationError('format', 'Not a receipt: its claims are not those of version 1');
  }
  return claims;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HASH = /^[0-9a-f]{64}$/;

/** Whether a value is a checkpoint as the gateway sends one (the signature is checked after). */
function isCheckpoint(value: unknown): value is SignedCheckpoint {
  const checkpoint = value as SignedCheckpoint | null;
  return (
    typeof checkpoint === 'object' &&
    checkpoint !== null &&
    Number.isSafeInteger(checkpoint.seq) &&
    [checkpoint.statement, checkpoint.head, checkpoint.key_id, checkpoint.signature].every((field) => typeof field === 'string')
  );
}

const isHashList = (value: unknown): value is readonly string[] => Array.isArray(value) && value.every((hash) => typeof hash === 'string' && HASH.test(hash));

/**
 * Checks that a signed checkpoint holds an event: the checkpoint's signature against the keys,
 * that its statement is a seal whose Merkle tree is the one the proof climbs, and the RFC 9162
 * inclusion path from the event's leaf to that root. With the receipt's claims, also that the proof
 * is of the event and hash the receipt names.
 * @throws ReceiptVerificationError naming what failed.
 */
export async function verifyInclusion(proof: InclusionProof, keys: AuditKeySet, receipt?: ReceiptClaims): Promise<void> {
  if (
    typeof proof !== 'object' ||
    proof === null ||
    !isCheckpoint(proof.checkpoint) ||
    !isHashList(proof.inclusion_proof) ||
    !Number.isSafeInteger(proof.leaf_index) ||
    !Number.isSafeInteger(proof.tree_size) ||
    typeof proof.event_id !== 'string' ||
    typeof proof.event_hash !== 'string'
  ) {
    throw new ReceiptVerificationError('format', 'Not an inclusion proof of the gateway’s shape');
  }
  if (receipt && (receipt.event_id !== proof.event_id || receipt.event_hash !== proof.event_hash)) {
    throw new ReceiptVerificationError('event_hash', 'The proof is not of the event the receipt names');
  }
  const statement = await signedStatement(proof.checkpoint, keys);
  if ((statement.v !== 2 && statement.v !== 3) || statement.kind !== 'seal') {
    throw new ReceiptVerificationError('checkpoint', 'The checkpoint is not a seal with a Merkle tree');
  }
  if (statement.merkle_root !== proof.merkle_root || statement.events !== proof.tree_size) {
    throw new ReceiptVerificationError('checkpoint', 'The proof climbs another tree than the checkpoint signed (its root or size differ)');
  }
  if (!HASH.test(proof.event_hash) || !UUID.test(proof.event_id)) {
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

/**
 * Checks that checkpoint `to` descends from checkpoint `from` (the one you kept: pass it as `kept`,
 * and the proof's `from` must be it, byte for byte): both signatures against the keys; that both
 * statements name the log's tree (version 3 or later) and `to` is later; the RFC 9162 consistency
 * proof from `from`'s tree to `to`'s; and the inclusion of `from`'s own head in `to`'s tree. Then
 * every checkpoint up to `from` is in `to`'s history: the log only grew.
 * @throws ReceiptVerificationError naming what failed.
 */
export async function verifyConsistency(proof: ConsistencyProof, keys: AuditKeySet, kept?: Pick<SignedCheckpoint, 'statement'>): Promise<void> {
  if (
    typeof proof !== 'object' ||
    proof === null ||
    !isCheckpoint(proof.from) ||
    !isCheckpoint(proof.to) ||
    !isHashList(proof.consistency_proof) ||
    !isHashList(proof.inclusion_proof)
  ) {
    throw new ReceiptVerificationError('format', 'Not a consistency proof of the gateway’s shape');
  }
  if (kept && kept.statement !== proof.from.statement) {
    throw new ReceiptVerificationError('checkpoint', 'The proof starts from another checkpoint than the one kept');
  }
  const older = await signedStatement(proof.from, keys);
  const newer = await signedStatement(proof.to, keys);
  const m = older.log_size;
  const n = newer.log_size;
  const namesTree = (statement: Statement) =>
    statement.v === 3 &&
    Number.isSafeInteger(statement.log_size) &&
    (statement.log_size as number) >= 0 &&
    typeof statement.log_root === 'string' &&
    HASH.test(statement.log_root);
  if (!namesTree(older) || !namesTree(newer) || typeof m !== 'number' || typeof n !== 'number') {
    throw new ReceiptVerificationError('checkpoint', 'A checkpoint names no log tree (its statement is not of version 3)');
  }
  if (!Number.isSafeInteger(older.seq) || !Number.isSafeInteger(newer.seq) || (newer.seq as number) <= (older.seq as number) || n <= m) {
    throw new ReceiptVerificationError('checkpoint', 'The later checkpoint is not after the earlier one');
  }
  const consistency = proof.consistency_proof.map((hex) => hexBytes(hex));
  if (m > 0 ? !(await consistencyHolds(m, n, hexBytes(older.log_root as string), hexBytes(newer.log_root as string), consistency)) : consistency.length > 0) {
    throw new ReceiptVerificationError('consistency', 'The consistency proof does not show the earlier tree to be the start of the later one');
  }
  // The earlier checkpoint's own head is leaf m of the later tree.
  const head = await sha256(new TextEncoder().encode(proof.from.statement));
  const root = await rootFromInclusionPath(
    await sha256(new Uint8Array([0]), head),
    m,
    n,
    proof.inclusion_proof.map((hex) => hexBytes(hex)),
  );
  if (root === undefined || hexOf(root) !== newer.log_root) {
    throw new ReceiptVerificationError('path', 'The earlier checkpoint is not in the later checkpoint’s tree');
  }
}

interface Statement {
  readonly v?: unknown;
  readonly seq?: unknown;
  readonly kind?: unknown;
  readonly merkle_root?: unknown;
  readonly events?: unknown;
  readonly log_size?: unknown;
  readonly log_root?: unknown;
}

/** A checkpoint's statement, once its signature holds under one of the keys. */
async function signedStatement(checkpoint: SignedCheckpoint, keys: AuditKeySet): Promise<Statement> {
  const jwk = keys.keys.find((key) => key.kid === checkpoint.key_id);
  if (!jwk) throw new ReceiptVerificationError('key', `No audit key in the set has checkpoint #${checkpoint.seq}’s key id ${checkpoint.key_id}`);
  if (!(await checkpointSignatureHolds(checkpoint.statement, checkpoint.signature, jwk))) {
    throw new ReceiptVerificationError('checkpoint_signature', `Checkpoint #${checkpoint.seq}’s signature does not verify`);
  }
  try {
    return JSON.parse(checkpoint.statement) as Statement;
  } catch {
    throw new ReceiptVerificationError('checkpoint', `Checkpoint #${checkpoint.seq}’s statement is not JSON`);
  }
}

const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/** RFC 9162 2.1.4.2: whether the proof shows the tree of `first` leaves (head `firstRoot`) to be the start of the tree of `second` (head `secondRoot`). */
async function consistencyHolds(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): Promise<boolean> {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first >= second || proof.length === 0) return false;
  // A first tree whose size is a power of two is a node of the second: the proof leaves its head out.
  const path = (BigInt(first) & (BigInt(first) - 1n)) === 0n ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = await sha256(new Uint8Array([1]), c, fr);
      sr = await sha256(new Uint8Array([1]), c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = await sha256(new Uint8Array([1]), sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hexOf(fr) === hexOf(firstRoot) && hexOf(sr) === hexOf(secondRoot);
}

/** RFC 9162 2.1.3.2: the root an inclusion path leads to, or undefined when the path does not fit the tree's size. */
async function rootFromInclusionPath(leaf: Uint8Array, index: number, size: number, path: readonly Uint8Array[]): Promise<Uint8Array | undefined> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (odd(fn) || fn === sn) {
      r = await sha256(new Uint8Array([1]), p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = await sha256(new Uint8Array([1]), r, p);
    }
    fn = half(fn);
    sn = half(sn);
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
