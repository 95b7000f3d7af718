import fc from 'fast-check';
import { MTH, PATH, SUBPROOF } from '../../../../test/support/rfc9162';
import {
  consistencyProof,
  consistencyProofOf,
  EMPTY_TREE_HASH,
  foldSubtrees,
  inclusionProof,
  inclusionProofOf,
  leafHash,
  perfectSubtrees,
  treeHead,
  treeHeadOfEntries,
  treeLevels,
  verifyConsistency,
  verifyInclusion,
} from './merkle';

/** Certificate Transparency's test inputs and the tree heads of their first 1 to 8 (its reference implementation's merkle tree tests). */
const CT_INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((hex) => Buffer.from(hex, 'hex'));
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

const leavesOf = (data: Buffer[]) => data.map((d) => leafHash(d));
const tree = fc.array(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
  { minLength: 1, maxLength: 70 },
);
/** Leaves that differ from each other (two equal leaves may stand for each other in a proof). */
const distinctTree = fc.uniqueArray(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
  {
    minLength: 2,
    maxLength: 70,
    selector: (leaf) => leaf.toString('hex'),
  },
);
/** A copy of `buffer` with one bit flipped. */
const flipped = (buffer: Buffer, bit: number) => {
  const copy = Buffer.from(buffer);
  copy[Math.floor(bit / 8) % copy.length] ^= 1 << (bit % 8);
  return copy;
};

describe('RFC 9162 Merkle trees', () => {
  it('when the tree of no leaves is hashed, then it is SHA-256 of nothing', () => {
    expect(treeHead([]).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(EMPTY_TREE_HASH.equals(treeHead([]))).toBe(true);
  });

  it.each(CT_ROOTS.map((root, i) => [i + 1, root]))(
    'when Certificate Transparency’s first %i test inputs are a tree, then its head is the published one',
    (size, root) => {
      expect(treeHead(leavesOf(CT_INPUTS.slice(0, size))).toString('hex')).toBe(root);
    },
  );

  it('when any tree is hashed, then its head is the second implementation’s', () => {
    fc.assert(fc.property(tree, (data) => expect(treeHead(leavesOf(data)).equals(MTH(data))).toBe(true)));
  });

  it('when leaves of one width lie end to end in one buffer, then their head is the second implementation’s, whatever their number', () => {
    const packed = fc
      .integer({ min: 1, max: 64 })
      .chain((width) => fc.tuple(fc.constant(width), fc.array(fc.uint8Array({ minLength: width, maxLength: width }), { maxLength: 140 })));
    fc.assert(
      fc.property(packed, ([width, entries]) => {
        const data = Buffer.concat(entries);
        const head = treeHeadOfEntries(data, width);
        expect(head.equals(MTH(entries.map((entry) => Buffer.from(entry))))).toBe(true);
        // The data is read, never written.
        expect(data.equals(Buffer.concat(entries))).toBe(true);
      }),
    );
  });

  it('when a buffer is not a whole number of leaves, then it has no tree head', () => {
    expect(() => treeHeadOfEntries(Buffer.alloc(100), 48)).toThrow(RangeError);
    expect(treeHeadOfEntries(Buffer.alloc(0), 48).equals(EMPTY_TREE_HASH)).toBe(true);
  });

  it('when an inclusion proof is made for any leaf, then it is the second implementation’s, and it verifies', () => {
    fc.assert(
      fc.property(tree, fc.nat(), (data, pick) => {
        const index = pick % data.length;
        const proof = inclusionProof(treeLevels(leavesOf(data)), index);

        expect(proof.map((p) => p.toString('hex'))).toEqual(PATH(index, data).map((p) => p.toString('hex')));
        expect(verifyInclusion(index, data.length, leafHash(data[index]), proof, MTH(data))).toBe(true);
      }),
    );
  });

  it('when a tree is kept as its levels, then its root is the head, and each leaf’s path read from them is the RFC’s', () => {
    fc.assert(
      fc.property(tree, fc.nat(), (data, pick) => {
        const index = pick % data.length;
        const levels = treeLevels(leavesOf(data));

        expect(levels[levels.length - 1]).toHaveLength(1);
        expect(levels[levels.length - 1][0].equals(MTH(data))).toBe(true);
        expect(inclusionProof(levels, index).map((p) => p.toString('hex'))).toEqual(PATH(index, data).map((p) => p.toString('hex')));
      }),
    );
  });

  it('when an inclusion proof, its leaf, its index or the root is altered, then it does not verify', () => {
    fc.assert(
      fc.property(distinctTree, fc.nat(), fc.nat(), (data, pick, bit) => {
        const index = pick % data.length;
        const leaves = leavesOf(data);
        const proof = inclusionProof(treeLevels(leaves), index);
        const root = treeHead(leaves);

        expect(verifyInclusion(index, data.length, flipped(leaves[index], bit), proof, root)).toBe(false);
        expect(verifyInclusion((index + 1) % data.length, data.length, leaves[index], proof, root)).toBe(false);
        expect(verifyInclusion(index, data.length, leaves[index], proof, flipped(root, bit))).toBe(false);
        expect(
          verifyInclusion(
            index,
            data.length,
            leaves[index],
            proof.map((p, i) => (i === bit % proof.length ? flipped(p, bit) : p)),
            root,
          ),
        ).toBe(false);
        expect(verifyInclusion(index, data.length, leaves[index], proof.slice(1), root)).toBe(false);
      }),
    );
  });

  it('when a consistency proof is made between any two sizes, then it is the second implementation’s, and it verifies', () => {
    fc.assert(
      fc.property(tree, fc.nat(), (data, pick) => {
        const first = 1 + (pick % data.length);
        const proof = consistencyProof(leavesOf(data), first);

        expect(proof.map((p) => p.toString('hex'))).toEqual(SUBPROOF(first, data, true).map((p) => p.toString('hex')));
        expect(verifyConsistency(first, data.length, MTH(data.slice(0, first)), MTH(data), proof)).toBe(true);
      }),
    );
  });

  it('when a consistency proof or either root is altered, or the first tree is not the start of the second, then it does not verify', () => {
    fc.assert(
      fc.property(tree, fc.nat(), fc.nat(), (data, pick, bit) => {
        const first = 1 + (pick % data.length);
        fc.pre(first < data.length);
        const leaves = leavesOf(data);
        const proof = consistencyProof(leaves, first);
        const [firstRoot, secondRoot] = [treeHead(leaves.slice(0, first)), treeHead(leaves)];
        // A second tree that rewrote one of the first tree's leaves.
        const rewritten = leaves.map((leaf, i) => (i === bit % first ? flipped(leaf, bit) : leaf));

        expect(verifyConsistency(first, data.length, flipped(firstRoot, bit), secondRoot, proof)).toBe(false);
        expect(verifyConsistency(first, data.length, firstRoot, flipped(secondRoot, bit), proof)).toBe(false);
        expect(
          verifyConsistency(
            first,
            data.length,
            firstRoot,
            secondRoot,
            proof.map((p, i) => (i === bit % proof.length ? flipped(p, bit) : p)),
          ),
        ).toBe(false);
        expect(verifyConsistency(first, data.length, firstRoot, treeHead(rewritten), consistencyProof(rewritten, first))).toBe(false);
        expect(verifyConsistency(first, data.length, firstRoot, secondRoot, [])).toBe(false);
      }),
    );
  });

  it('when the two sizes are equal, then only an empty proof between equal roots verifies', () => {
    const root = treeHead(leavesOf(CT_INPUTS));

    expect(verifyConsistency(8, 8, root, root, [])).toBe(true);
    expect(verifyConsistency(8, 8, root, flipped(root, 3), [])).toBe(false);
    expect(verifyConsistency(8, 8, root, root, [root])).toBe(false);
  });

  /**
   * The log's tree as the database keeps it (migration AuditLogTree): each leaf's row holds the
   * hashes of the perfect subtrees that end at it, of sizes 1, 2, 4… (built here from the second
   * implementation's MTH, not from merkle.ts).
   */
  function storedNodes(data: Buffer[]): (start: number, end: number) => Buffer {
    const rows = data.map((_, leaf) => {
      const nodes: Buffer[] = [];
      for (let size = 1; (leaf + 1) % size === 0; size *= 2) nodes.push(MTH(data.slice(leaf + 1 - size, leaf + 1)));
      return nodes;
    });
    return (start, end) => foldSubtrees(perfectSubtrees(start, end).map((part) => rows[part.start + part.size - 1][Math.log2(part.size)]));
  }

  it('when proofs are made from stored perfect subtrees, as the log’s tree keeps them, then they are the second implementation’s, and its head is MTH', () => {
    fc.assert(
      fc.property(tree, fc.nat(), fc.nat(), (data, a, b) => {
        const hashOf = storedNodes(data);
        const index = a % data.length;
        const first = (b % data.length) + 1;
        expect(hashOf(0, data.length)).toEqual(MTH(data));
        expect(inclusionProofOf(hashOf, data.length, index)).toEqual(PATH(index, data));
        expect(consistencyProofOf(hashOf, data.length, first)).toEqual(SUBPROOF(first, data, true));
      }),
    );
  });

  it('when a range is not a subtree of an RFC 9162 tree, then it has no perfect subtrees to be read from', () => {
    expect(perfectSubtrees(4, 7)).toEqual([
      { start: 4, size: 2 },
      { start: 6, size: 1 },
    ]);
    expect(() => perfectSubtrees(1, 5)).toThrow(RangeError);
    expect(foldSubtrees([])).toEqual(EMPTY_TREE_HASH);
  });
});
