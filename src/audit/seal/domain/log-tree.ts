import { EMPTY_TREE_HASH, foldSubtrees, leafHash, nodeHash, perfectSubtrees, SubtreeHash, treeHead } from './merkle';

/**
 * The log's tree (migration AuditLogTree): an RFC 9162 tree whose leaves are the checkpoints'
 * heads, from the first version 3 statement on. The database keeps, for each leaf, the hashes of
 * the perfect subtrees that end at it (sizes 1, 2, 4…), so that any subtree a proof needs is a few
 * rows' nodes, read by primary key.
 */

/** The stored nodes of the leaves asked for, by leaf index (each 32 × k bytes, smallest subtree first). */
export type LogTreeNodes = (leaves: readonly number[]) => Promise<ReadonlyMap<number, Buffer>>;

/** The stored tree does not hold a node a proof needs: it was altered (audit:verify reports it). */
export class LogTreeIncomplete extends Error {
  constructor(leaf: number, size: number) {
    super(`the log's tree holds no subtree of ${size} ending at leaf ${leaf}`);
    this.name = 'LogTreeIncomplete';
  }
}

function nodeOf(rows: ReadonlyMap<number, Buffer>, part: { start: number; size: number }): Buffer {
  const leaf = part.start + part.size - 1;
  const level = Math.log2(part.size);
  const node = rows.get(leaf)?.subarray(level * 32, level * 32 + 32);
  if (!node || node.length !== 32) throw new LogTreeIncomplete(leaf, part.size);
  return node;
}

/**
 * Runs `compute` (a proof over the tree, given how to hash any subtree of it) twice: once to learn
 * which stored nodes it reads, then, with them read in one statement, for its result.
 * @throws LogTreeIncomplete when a node it needs is not stored.
 */
export async function withStoredNodes<T>(read: LogTreeNodes, compute: (hashOf: SubtreeHash) => T): Promise<T> {
  const wanted = new Set<number>();
  compute((start, end) => {
    for (const part of perfectSubtrees(start, end)) wanted.add(part.start + part.size - 1);
    return EMPTY_TREE_HASH;
  });
  const rows = await read([...wanted]);
  return compute((start, end) => foldSubtrees(perfectSubtrees(start, end).map((part) => nodeOf(rows, part))));
}

/** A tree's frontier: the heads of its perfect subtrees, largest first. Appending a leaf is O(log n); the head is their fold. */
export class LogFrontier {
  private constructor(
    private readonly parts: { size: number; hash: Buffer }[],
    public size: number,
  ) {}

  static empty(): LogFrontier {
    return new LogFrontier([], 0);
  }

  /** The frontier of the first `size` leaves, from the stored tree. */
  static async stored(read: LogTreeNodes, size: number): Promise<LogFrontier> {
    const parts = await withStoredNodes(read, (hashOf) =>
      perfectSubtrees(0, size).map((part) => ({ size: part.size, hash: hashOf(part.start, part.start + part.size) })),
    );
    return new LogFrontier(parts, size);
  }

  /** The RFC 9162 tree head (hex). */
  root(): string {
    return (this.parts.length === 0 ? treeHead([]) : foldSubtrees(this.parts.map((part) => part.hash))).toString('hex');
  }

  /**
   * Adds a checkpoint's head (hex) as the next leaf. Returns the perfect subtrees that now end at
   * it, smallest first: what the database stores for that leaf.
   */
  append(head: string): Buffer {
    const ending = [leafHash(Buffer.from(head, 'hex'))];
    this.parts.push({ size: 1, hash: ending[0] });
    while (this.parts.length > 1 && this.parts[this.parts.length - 1].size === this.parts[this.parts.length - 2].size) {
      const right = this.parts.pop()!;
      const left = this.parts.pop()!;
      const hash = nodeHash(left.hash, right.hash);
      ending.push(hash);
      this.parts.push({ size: left.size * 2, hash });
    }
    this.size++;
    return Buffer.concat(ending);
  }
}
