import { randomUUID } from 'node:crypto';
import { CheckpointStatement, decodeManifest, encodeManifest, sha256, parseStatement, statementText, ZERO_HEAD } from './audit-seal';

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
    ['another version', statementText({ ...statement, v: 2 as 1 })],
  ])('when a stored statement is %s, then it is not taken for one the sealer wrote', (_, text) => {
    expect(parseStatement(text)).toBeUndefined();
  });

  it('when a manifest is encoded and decoded, then the ids and hashes come back in order', () => {
    const entries = [randomUUID(), randomUUID()].map((id, i) => ({ id, hash: sha256(`e${i}`) }));

    const bytes = encodeManifest(entries);

    expect(bytes).toHaveLength(96);
    expect(decodeManifest(bytes)).toEqual(entries);
    expect(decodeManifest(bytes.subarray(0, 95))).toBeUndefined();
  });
});
