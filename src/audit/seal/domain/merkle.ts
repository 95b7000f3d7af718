import { hash } from 'node:crypto';

/**
 * Merkle trees as RFC 9162 (Certificate Transparency 2.0, section 2.1) defines them, over SHA-256:
 * the tree head of a list of leaves, an inclusion proof (the audit path of one leaf) and a
 * consistency proof (that a tree of `first` leaves is the start of one of `second`), with their
 * verification as the RFC's algorithms state it. Leaves enter as their leaf hashes
 * (`leafHash(data)`), so a tree can be built from stored hashes without the leaves' contents.
 */

const LEAF_PREFIX = Buffer.from([0x00]);

/** One input buffer for a manifest entry's leaf hash (0x00, then the entry's 48 bytes). */
const LEAF_INPUT = Buffer.alloc(49, 0x00);

/** The hash of an empty tree: SHA-256 of nothing. */
export const EMPTY_TREE_HASH = hash('sha256', Buffer.alloc(0), 'buffer');

/** One input buffer for every node hash (0x01, then two 32-byte hashes): hashing is synchronous, so it is never shared. */
const NODE_INPUT = Buffer.alloc(65, 0x01);

/** MTH({d}) = SHA-256(0x00 || d); a manifest entry's (48 bytes) over a reused input, as nodeHash. */
export function leafHash(data: Buffer): Buffer {
  if (data.length !== 48) return hash('sha256', Buffer.concat([LEAF_PREFIX, data]), 'buffer');
  data.copy(LEAF_INPUT, 1);
  return hash('sha256', LEAF_INPUT, 'buffer');
}

/** SHA-256(0x01 || left || right), one-shot over a reused input: verify hashes two nodes an event. */
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  if (left.length !== 32 || right.length !== 32) return hash('sha256', Buffer.concat([NODE_INPUT.subarray(0, 1), left, right]), 'buffer');
  left.copy(NODE_INPUT, 1);
  right.copy(NODE_INPUT, 33);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[start:end]) over leaf hashes. */
function treeHash(leaves: readonly Buffer[], start: number, end: number): Buffer {
  const n = end - start;
  if (n === 0) return EMPTY_TREE_HASH;
  if (n === 1) return leaves[start];
  const k = split(n);
  return nodeHash(treeHash(leaves, start, start + k), treeHash(leaves, start + k, end));
}

/**
 * The tree head of the leaves (each given as its leaf hash), level by level from the left, an odd
 * last node carried up as it is: RFC 9162's tree (see treeLevels), without keeping the levels.
 */
export function treeHead(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_TREE_HASH;
  let level = leaves;
  while (level.length > 1) {
    const above: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) above.push(nodeHash(level[i], level[i + 1]));
    if (level.length % 2 === 1) above.push(level[level.length - 1]);
    level = above;
  }
  return level[0];
}

/**
 * The tree head of leaves laid end to end in `data`, `width` bytes each (a manifest's entries):
 * treeHead of their leaf hashes, computed inside one buffer of hashes, level by level, each node
 * written over the pair below it. Each hash comes out as a latin1 ('binary') string, written into
 * that buffer: no Buffer per leaf or node, which costs about three times the hashing and, for a
 * batch of thousands, outlives the young generation while the tree is built.
 */
export function treeHeadOfEntries(data: Buffer, width: number): Buffer {
  const n = data.length / width;
  if (!Number.isInteger(width) || width < 1 || !Number.isInteger(n)) throw new RangeError(`${data.length} bytes are not leaves of ${width} bytes`);
  if (n === 0) return EMPTY_TREE_HASH;
  const hashes = Buffer.allocUnsafe(n * 32);
  const input = Buffer.alloc(1 + width, 0x00);
  for (let i = 0; i < n; i++) {
    data.copy(input, 1, i * width, (i + 1) * width);
    hashes.write(hash('sha256', input, 'binary'), i * 32, 'binary');
  }
  for (let size = n; size > 1; size = (size >> 1) + (size & 1)) {
    const pairs = size >> 1;
    // Node i is written where its pair began to be read: never over a pair not yet read.
    for (let i = 0; i < pairs; i++) {
      hashes.copy(NODE_INPUT, 1, 64 * i, 64 * i + 64);
      hashes.write(hash('sha256', NODE_INPUT, 'binary'), 32 * i, 'binary');
    }
    // An odd last node is carried up as it is.
    if (size & 1) hashes.copy(hashes, 32 * pairs, 32 * (size - 1), 32 * size);
  }
  return Buffer.from(hashes.subarray(0, 32));
}

/**
 * MTH(D[start:end]) as a store knows it: computed from the leaves, or read from stored nodes. The
 * proofs below ask only for ranges of RFC 9162's own recursion, so every perfect subtree among them
 * starts at a multiple of its size (see perfectSubtrees).
 */
export type SubtreeHash = (start: number, end: number) => Buffer;

/** SUBPROOF(m, D[start:end], whole). */
function subproof(m: number, hashOf: SubtreeHash, start: number, end: number, whole: boolean, out: Buffer[]): void {
  const n = end - start;
  if (m === n) {
    if (!whole) out.push(hashOf(start, end));
    return;
  }
  const k = split(n);
  if (m <= k) {
    subproof(m, hashOf, start, start + k, whole, out);
    out.push(hashOf(start + k, end));
  } else {
    subproof(m - k, hashOf, start + k, end, false, out);
    out.push(hashOf(start, start + k));
  }
}

/** The consistency proof (RFC 9162 PROOF(m, D[n])) between the tree of the first `first` leaves and the tree of `size`. */
export function consistencyProofOf(hashOf: SubtreeHash, size: number, first: number): Buffer[] {
  if (!Number.isInteger(first) || first < 1 || first > size) throw new RangeError(`a tree of ${first} is not the start of one of ${size}`);
  const out: Buffer[] = [];
  subproof(first, hashOf, 0, size, true, out);
  return out;
}

/** The consistency proof between the tree of the first `first` leaves and the tree of all of them. */
export function consistencyProof(leaves: readonly Buffer[], first: number): Buffer[] {
  return consistencyProofOf((start, end) => treeHash(leaves, start, end), leaves.length, first);
}

/** The inclusion proof (RFC 9162 PATH(m, D[n])) of leaf `index` in the tree of `size`. */
export function inclusionProofOf(hashOf: SubtreeHash, size: number, index: number): Buffer[] {
  if (!Number.isInteger(index) || index < 0 || index >= size) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const out: Buffer[] = [];
  let start = 0;
  let end = size;
  // From the root down, each level's sibling; the path lists them from the leaf up.
  while (end - start > 1) {
    const k = split(end - start);
    if (index < start + k) {
      out.push(hashOf(start + k, end));
      end = start + k;
    } else {
      out.push(hashOf(start, start + k));
      start += k;
    }
  }
  return out.reverse();
}

/**
 * The perfect subtrees whose hashes make MTH(D[start:end]), largest first, as RFC 9162's recursion
 * splits it (`start` a multiple of the first one's size): the tree head is their hashes folded from
 * the right (foldSubtrees).
 */
export function perfectSubtrees(start: number, end: number): { start: number; size: number }[] {
  const parts: { start: number; size: number }[] = [];
  let at = start;
  while (end - at > 0) {
    const n = end - at;
    const size = n === 1 ? 1 : (n & (n - 1)) === 0 ? n : split(n);
    if (at % size !== 0) throw new RangeError(`D[${start}:${end}] is not a subtree of an RFC 9162 tree`);
    parts.push({ start: at, size });
    at += size;
  }
  return parts;
}

/** The head of a range from its perfect subtrees' hashes, largest first (perfectSubtrees). */
export function foldSubtrees(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) return EMPTY_TREE_HASH;
  let r = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) r = nodeHash(hashes[i], r);
  return r;
}

/**
 * Every level of the tree, leaves first, root last, built by pairing each level's nodes from the
 * left and carrying an odd last node up as it is: the same tree as RFC 9162's recursive definition
 * (its left subtrees are the largest powers of two), kept whole so that each proof after it is
 * O(log n) lookups.
 */
export function treeLevels(leaves: readonly Buffer[]): Buffer[][] {
  if (leaves.length === 0) return [[EMPTY_TREE_HASH]];
  const levels: Buffer[][] = [[...leaves]];
  while (levels[levels.length - 1].length > 1) {
    const below = levels[levels.length - 1];
    const level: Buffer[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) level.push(nodeHash(below[i], below[i + 1]));
    if (below.length % 2 === 1) level.push(below[below.length - 1]);
    levels.push(level);
  }
  return levels;
}

/** The inclusion proof (audit path, RFC 9162's PATH) of leaf `index`, read from the tree's levels (treeLevels). */
export function inclusionProof(levels: readonly (readonly Buffer[])[], index: number): Buffer[] {
  if (!Number.isInteger(index) || index < 0 || index >= levels[0].length) throw new RangeError(`leaf ${index} is not in a tree of ${levels[0].length}`);
  const path: Buffer[] = [];
  let at = index;
  for (let level = 0; level < levels.length - 1; level++) {
    const sibling = at ^ 1;
    // A last node without a sibling is carried up as it is: nothing to add at this level.
    if (sibling < levels[level].length) path.push(levels[level][sibling]);
    at >>= 1;
  }
  return path;
}

const isOdd = (n: bigint) => (n & 1n) === 1n;

/** RFC 9162 2.1.3.2: whether `proof` shows the leaf with this hash at `index` in the tree of `size` whose head is `root`. */
export function verifyInclusion(index: number, size: number, leaf: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(root);
}

/** RFC 9162 2.1.4.2: whether `proof` shows the tree of `first` leaves with head `firstRoot` to be the start of the tree of `second` with head `secondRoot`. */
export function verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: readonly Buffer[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (proof.length === 0) return false;
  const powerOfTwo = (BigInt(first) & BigInt(first - 1)) === 0n;
  const path = powerOfTwo ? [firstRoot, ...proof] : [...proof];
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while (isOdd(fn)) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0n;
}
