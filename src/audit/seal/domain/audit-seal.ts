import { hash } from 'node:crypto';
import { leafHash, treeHeadOfEntries } from './merkle';

/**
 * The sealed audit log (docs/security.md, "Sealed audit log"): what a checkpoint says, and how an
 * event and a checkpoint are hashed. Shared by the sealer and by verify, so that the two cannot
 * drift apart.
 *
 * - An event's hash is SHA-256 of a canonical form of its columns, which the store computes (see
 *   `EVENT_DIGEST_VERSION`).
 * - A checkpoint's manifest is, in seal order, each covered event's id (16 bytes) and hash (32 bytes).
 * - A checkpoint's statement is a JSON text naming its sequence number, the previous head, the range
 *   it covers, the number of events and the manifest's SHA-256; its head is SHA-256 of that text, and
 *   the signature is Ed25519 over the same text. Each statement names the previous head: a chain.
 * - Since statement version 2, a seal's statement also carries the RFC 9162 tree head of its
 *   manifest's entries, each entry a leaf (`merkleRootOf`): an event's inclusion proof in it shows
 *   a partner that the checkpoint holds the event, without the other events' contents.
 */

/**
 * The statement version the sealer writes: 2 adds `merkle_root`; 3 adds `log_size` and `log_root`,
 * the tree of the checkpoints before it (migration AuditLogTree). Older statements verify as they are.
 */
export const STATEMENT_VERSION = 3;

/** Bumped whenever the canonical form of an event changes; each statement names the one it used. */
export const EVENT_DIGEST_VERSION = 1;

/** Events in seal order: by the writing transaction's id, then by event id. */
export interface SealPosition {
  /** A 64-bit transaction id, in decimal. */
  readonly tx: string;
  readonly id: string;
}

/** Before every event: where the first checkpoint starts. */
export const ORIGIN: SealPosition = { tx: '0', id: '00000000-0000-0000-0000-000000000000' };

export const ZERO_HEAD = Buffer.alloc(32).toString('hex');

export type CheckpointKind = 'seal' | 'purge';

export interface PurgeRecord {
  /** The newest checkpoint removed, and its head: the oldest one left names it as its previous. */
  readonly through_seq: number;
  readonly through_head: string;
  readonly events: number;
  readonly cutoff: string;
}

/** What a checkpoint says; signed as the JSON text `statementText` makes of it. */
export interface CheckpointStatement {
  readonly v: 1 | 2 | 3;
  readonly seq: number;
  readonly kind: CheckpointKind;
  readonly sealed_at: string;
  readonly prev_head: string;
  readonly digest: number;
  /** The range covered: events after `after` up to and including `end`, in seal order. */
  readonly after: SealPosition;
  readonly end: SealPosition;
  readonly events: number;
  readonly first_occurred_at: string | null;
  readonly last_occurred_at: string | null;
  readonly manifest_sha256: string | null;
  readonly purge: PurgeRecord | null;
  /** Version 2: the RFC 9162 tree head (hex) of a seal's manifest entries; null for a purge. Absent in version 1. */
  readonly merkle_root?: string | null;
  /**
   * Version 3: the log's tree, whose leaves are the heads of the checkpoints of version 3 and later,
   * in order: how many came before this one (its own head is the next leaf, at that index), and the
   * RFC 9162 tree head (hex) of theirs. Absent before version 3.
   */
  readonly log_size?: number;
  readonly log_root?: string;
}

/** A checkpoint as stored and as logged. */
export interface SignedCheckpoint {
  readonly seq: number;
  /** The exact text that was signed and hashed. */
  readonly statement: string;
  /** SHA-256 of the statement, hex. */
  readonly head: string;
  readonly keyId: string;
  /** Ed25519 over the statement, base64. */
  readonly signature: string;
}

/** An event as verify reads it: its place in seal order and its hash. */
export interface EventDigestRow {
  readonly id: string;
  readonly tx: string;
  readonly hash: Buffer;
}

/**
 * The settled events a checkpoint will cover, as the sealer reads them: how many, their manifest
 * (each one's id and hash, in seal order: encodeManifest's bytes), when the first and the last of
 * them occurred (ISO 8601, to the microsecond, UTC), and the last one's place in seal order. Read
 * as one value rather than event by event: the sealer reads up to SEAL_BATCH events a second at
 * full load, and an object per event outlived the young generation's collections, so the gateway's
 * old generation grew with them (docs/benchmarks.md).
 */
export interface SettledBatch {
  readonly events: number;
  readonly manifest: Buffer;
  readonly firstOccurredAt: string;
  readonly lastOccurredAt: string;
  readonly end: SealPosition;
}

/** The field order is fixed here: the text is what is signed. */
export function statementText(s: CheckpointStatement): string {
  return JSON.stringify({
    v: s.v,
    seq: s.seq,
    kind: s.kind,
    sealed_at: s.sealed_at,
    prev_head: s.prev_head,
    digest: s.digest,
    after: { tx: s.after.tx, id: s.after.id },
    end: { tx: s.end.tx, id: s.end.id },
    events: s.events,
    first_occurred_at: s.first_occurred_at,
    last_occurred_at: s.last_occurred_at,
    manifest_sha256: s.manifest_sha256,
    purge: s.purge && { through_seq: s.purge.through_seq, through_head: s.purge.through_head, events: s.purge.events, cutoff: s.purge.cutoff },
    ...(s.v === 1 ? {} : { merkle_root: s.merkle_root ?? null }),
    ...(s.v < 3 ? {} : { log_size: s.log_size, log_root: s.log_root }),
  });
}

/** Parses a stored statement; undefined when it is not one (verify reports it). */
export function parseStatement(text: string): CheckpointStatement | undefined {
  try {
    const parsed = JSON.parse(text) as CheckpointStatement;
    if (![1, 2, 3].includes(parsed?.v) || !Number.isSafeInteger(parsed.seq) || !parsed.after || !parsed.end) return undefined;
    if (parsed.v === 3 && (!Number.isSafeInteger(parsed.log_size) || typeof parsed.log_root !== 'string')) return undefined;
    return statementText(parsed) === text ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function sha256(data: string | Buffer): Buffer {
  return hash('sha256', data, 'buffer');
}

export function headOf(statement: string): string {
  return sha256(statement).toString('hex');
}

/** Compares positions in seal order. */
export function comparePositions(a: SealPosition, b: SealPosition): number {
  const ta = BigInt(a.tx);
  const tb = BigInt(b.tx);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export const MANIFEST_ENTRY_BYTES = 48;
const ENTRY = MANIFEST_ENTRY_BYTES;

export interface ManifestEntry {
  readonly id: string;
  readonly hash: Buffer;
}

export function encodeManifest(entries: readonly ManifestEntry[]): Buffer {
  const out = Buffer.allocUnsafe(entries.length * ENTRY);
  entries.forEach((entry, i) => {
    out.write(entry.id.replace(/-/g, ''), i * ENTRY, 16, 'hex');
    entry.hash.copy(out, i * ENTRY + 16);
  });
  return out;
}

/** Undefined when the bytes are not a whole number of entries. */
export function decodeManifest(bytes: Buffer): ManifestEntry[] | undefined {
  if (bytes.length % ENTRY !== 0) return undefined;
  const entries: ManifestEntry[] = [];
  for (let offset = 0; offset < bytes.length; offset += ENTRY) {
    const hex = bytes.toString('hex', offset, offset + 16);
    entries.push({
      id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
      hash: bytes.subarray(offset + 16, offset + ENTRY),
    });
  }
  return entries;
}

/** Where the entry of event `id` is in a manifest, or -1: compared on the id's 16 bytes, nothing decoded. */
export function manifestIndexOf(manifest: Buffer, id: string): number {
  const bytes = Buffer.from(id.replace(/-/g, ''), 'hex');
  for (let offset = 0; offset < manifest.length; offset += ENTRY) {
    if (manifest.compare(bytes, 0, 16, offset, offset + 16) === 0) return offset / ENTRY;
  }
  return -1;
}

/** The event hash of a manifest's entry `index`. */
export function manifestHashAt(manifest: Buffer, index: number): Buffer {
  return Buffer.from(manifest.subarray(index * ENTRY + 16, (index + 1) * ENTRY));
}

/** How many entries a manifest holds. */
export function manifestSize(manifest: Buffer): number {
  return manifest.length / ENTRY;
}

/** A manifest entry as a leaf of its checkpoint's Merkle tree: the leaf hash of its 48 bytes (id, then event hash). */
export function entryLeaf(manifest: Buffer, index: number): Buffer {
  return leafHash(manifest.subarray(index * ENTRY, (index + 1) * ENTRY));
}

/** The leaves of a manifest's Merkle tree, in seal order. */
export function manifestLeaves(manifest: Buffer): Buffer[] {
  const leaves: Buffer[] = [];
  for (let i = 0; i < manifest.length / ENTRY; i++) leaves.push(entryLeaf(manifest, i));
  return leaves;
}

/**
 * The RFC 9162 tree head of a manifest (hex): what a version 2 seal statement carries as `merkle_root`.
 * @throws RangeError when the bytes are not a whole number of entries (see merkleRootMatches).
 */
export function merkleRootOf(manifest: Buffer): string {
  return treeHeadOfEntries(manifest, ENTRY).toString('hex');
}

/** Whether a stored manifest's tree head is `root`: never, for bytes that are not a whole number of entries. */
export function merkleRootMatches(manifest: Buffer, root: string | null | undefined): boolean {
  return manifest.length % ENTRY === 0 && merkleRootOf(manifest) === root;
}
