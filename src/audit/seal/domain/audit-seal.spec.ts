import { createHash, randomUUID } from 'node:crypto';
import {
  CheckpointStatement,
  decodeManifest,
  encodeManifest,
  merkleRootMatches,
  merkleRootOf,
  sha256,
  parseStatement,
  statementText,
  ZERO_HEAD,
} from './audit-seal';

const statement: CheckpointStatement = {
  v: 1,
  seq: 7,
  kind: 'seal',
  sealed_at: '2026-11-22T10:00:00.000Z',
  prev_head: ZERO_HEAD,
  digest: 1,
  after: { tx: '100', id: randomUUID() },
  end: { tx: '120', id: randomUUID() },
  events: 3,
  first_occurred_at: '2026-11-22T09:59:59.100000Z',
  last_occurred_at: '2026-11-22T09:59:59.900000Z',
  manifest_sha256: 'ab'.repeat(32),
  purge: null,
};

describe('audit seal', () => {
  it('when a statement is written and read back, then it is the same statement', () => {
    expect(parseStatement(statementText(statement))).toEqual(statement);
  });

  it.each([
    ['not JSON', 'not json'],
    ['the same fields in another order', JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(statementText(statement)) as object).reverse()))],
    ['spacing added', statementText(statement).replace('"events":', '"events": ')],
    ['another version', statementText({ ...statement, v: 4 as 1 })],
    ['a version 3 statement without the log’s tree', statementText({ ...statement, v: 3, merkle_root: null })],
    ['a version 1 statement with a Merkle root', statementText(statement).replace('"purge":null}', '"purge":null,"merkle_root":null}')],
  ])('when a stored statement is %s, then it is not taken for one the sealer wrote', (_, text) => {
    expect(parseStatement(text)).toBeUndefined();
  });

  it('when a version 2 statement is written and read back, then it is the same, with its Merkle root last', () => {
    const v2: CheckpointStatement = { ...statement, v: 2, merkle_root: 'cd'.repeat(32) };

    expect(statementText(v2).endsWith(`"merkle_root":"${'cd'.repeat(32)}"}`)).toBe(true);
    expect(parseStatement(statementText(v2))).toEqual(v2);
  });

  it('when a version 3 statement is written and read back, then it is the same, with the log’s tree after the Merkle root', () => {
    const v3: CheckpointStatement = { ...statement, v: 3, merkle_root: 'cd'.repeat(32), log_size: 41, log_root: 'ef'.repeat(32) };

    expect(statementText(v3).endsWith(`"merkle_root":"${'cd'.repeat(32)}","log_size":41,"log_root":"${'ef'.repeat(32)}"}`)).toBe(true);
    expect(parseStatement(statementText(v3))).toEqual(v3);
  });

  it('when a version 1 statement is written, then it is the text version 1 always was: no Merkle root', () => {
    expect(statementText(statement)).not.toContain('merkle_root');
    expect(statementText({ ...statement, merkle_root: 'cd'.repeat(32) })).toBe(statementText(statement));
  });

  it('when a manifest is a Merkle tree, then each entry is a leaf: its 48 bytes, hashed as RFC 9162 hashes a leaf', () => {
    const entries = [randomUUID(), randomUUID(), randomUUID()].map((id, i) => ({ id, hash: sha256(`e${i}`) }));
    const manifest = encodeManifest(entries);
    const leaf = (i: number) =>
      createHash('sha256')
        .update(Buffer.from([0]))
        .update(manifest.subarray(i * 48, i * 48 + 48))
        .digest();
    const node = (a: Buffer, b: Buffer) =>
      createHash('sha256')
        .update(Buffer.from([1]))
        .update(a)
        .update(b)
        .digest();

    expect(merkleRootOf(manifest)).toBe(node(node(leaf(0), leaf(1)), leaf(2)).toString('hex'));
  });

  it('when a stored manifest is checked against a root, then only its own tree head matches, and bytes that are not whole entries match none', () => {
    const manifest = encodeManifest([randomUUID(), randomUUID(), randomUUID()].map((id, i) => ({ id, hash: sha256(`e${i}`) })));
    const root = merkleRootOf(manifest);

    expect(merkleRootMatches(manifest, root)).toBe(true);
    expect(merkleRootMatches(manifest.subarray(0, 96), root)).toBe(false);
    expect(merkleRootMatches(manifest, null)).toBe(false);
    expect(() => merkleRootOf(manifest.subarray(0, 100))).toThrow(RangeError);
    expect(merkleRootMatches(manifest.subarray(0, 100), root)).toBe(false);
  });

  it('when a manifest is encoded and decoded, then the ids and hashes come back in order', () => {
    const entries = [randomUUID(), randomUUID()].map((id, i) => ({ id, hash: sha256(`e${i}`) }));

    const bytes = encodeManifest(entries);

    expect(bytes).toHaveLength(96);
    expect(decodeManifest(bytes)).toEqual(entries);
    expect(decodeManifest(bytes.subarray(0, 95))).toBeUndefined();
  });
});
