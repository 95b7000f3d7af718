import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import fc from 'fast-check';
import { CompactSign } from 'jose';
import { MTH, PATH, SUBPROOF } from '../support/rfc9162';
import {
  type AuditKeySet,
  type ConsistencyProof,
  ReceiptVerificationError,
  type SignedCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
} from '../../clients/typescript/src/receipts';

/**
 * The typed client's consistency check against a log built here with the second implementation of
 * RFC 9162 (test/support/rfc9162.ts): checkpoints whose statements name the tree of the heads before
 * them, signed with a key made here. Every pair of checkpoints must verify, whatever the sizes (powers
 * of two included); any altered hash must not.
 */
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const keys = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'EdDSA' }] } as AuditKeySet;

function log(count: number): { checkpoints: SignedCheckpoint[]; heads: Buffer[] } {
  const heads: Buffer[] = [];
  const checkpoints: SignedCheckpoint[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const statement = JSON.stringify({ v: 3, seq, kind: 'seal', log_size: heads.length, log_root: MTH(heads).toString('hex') });
    const head = createHash('sha256').update(statement).digest();
    checkpoints.push({
      seq,
      statement,
      head: head.toString('hex'),
      key_id: 'k1',
      signature: sign(null, Buffer.from(statement), privateKey).toString('base64'),
    });
    heads.push(head);
  }
  return { checkpoints, heads };
}

function proofBetween(built: ReturnType<typeof log>, from: number, to: number): ConsistencyProof {
  // Checkpoint `from` (1-based) names the first from-1 heads; its own head is leaf from-1 of the tree `to` names.
  const m = from - 1;
  const later = built.heads.slice(0, to - 1);
  return {
    from: built.checkpoints[from - 1],
    to: built.checkpoints[to - 1],
    consistency_proof: m === 0 ? [] : SUBPROOF(m, later, true).map((hash) => hash.toString('hex')),
    inclusion_proof: PATH(m, later).map((hash) => hash.toString('hex')),
  };
}

const failureOf = (proof: ConsistencyProof) =>
  verifyConsistency(proof, keys).then(
    () => 'verified',
    (error: unknown) => (error instanceof ReceiptVerificationError ? error.failed : String(error)),
  );

describe('the typed client’s verifyConsistency, against a second implementation of RFC 9162', () => {
  const built = log(40);

  it('when any earlier checkpoint is proved into any later one, then it verifies', async () => {
    for (let to = 2; to <= 40; to++) {
      for (let from = 1; from < to; from++) expect(`${from}→${to}: ${await failureOf(proofBetween(built, from, to))}`).toBe(`${from}→${to}: verified`);
    }
  });

  it('when a hash of either proof is altered, then it names the proof that failed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 40 }), fc.nat(), fc.nat(), fc.nat({ max: 255 }), async (to, a, which, bit) => {
        const from = (a % (to - 1)) + 1;
        const proof = proofBetween(built, from, to);
        const field = which % 2 === 0 && proof.consistency_proof.length > 0 ? 'consistency_proof' : 'inclusion_proof';
        if (proof[field].length === 0) return;
        const hashes = [...proof[field]];
        const at = which % hashes.length;
        const bytes = Buffer.from(hashes[at], 'hex');
        bytes[bit % 32] ^= 1 << (bit % 8);
        hashes[at] = bytes.toString('hex');
        expect(await failureOf({ ...proof, [field]: hashes })).toBe(field === 'consistency_proof' ? 'consistency' : 'path');
      }),
      { numRuns: 60 },
    );
  });

  it('when a checkpoint is of another version, or a proof or receipt is not of the gateway’s shape, then it names the checkpoint or the format, never a TypeError', async () => {
    const proof = proofBetween(built, 3, 9);
    const signed = (statement: object): SignedCheckpoint => {
      const text = JSON.stringify(statement);
      return {
        seq: 9,
        statement: text,
        head: createHash('sha256').update(text).digest('hex'),
        key_id: 'k1',
        signature: sign(null, Buffer.from(text), privateKey).toString('base64'),
      };
    };
    const later = JSON.parse(proof.to.statement) as Record<string, unknown>;
    const receiptWith = (claims: object) =>
      new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'audit-receipt+jws' }).sign(privateKey);
    const receiptFailure = async (receipt: string) =>
      verifyReceipt(receipt, keys).then(
        () => 'verified',
        (error: unknown) => (error instanceof ReceiptVerificationError ? error.failed : String(error)),
      );
    const inclusionFailure = (value: unknown) =>
      verifyInclusion(value as never, keys).then(
        () => 'verified',
        (error: unknown) => (error instanceof ReceiptVerificationError ? error.failed : String(error)),
      );

    expect(await failureOf({ ...proof, to: signed({ ...later, v: 2 }) })).toBe('checkpoint');
    expect(await failureOf({ ...proof, to: signed({ ...later, v: '3' }) })).toBe('checkpoint');
    expect(await failureOf({ ...proof, to: signed({ ...later, log_size: 2 ** 53 }) })).toBe('checkpoint');
    expect(await failureOf({ ...proof, consistency_proof: undefined } as never)).toBe('format');
    expect(await failureOf({ ...proof, to: undefined } as never)).toBe('format');
    expect(await failureOf({ ...proof, inclusion_proof: ['00'] })).toBe('format');
    expect(await inclusionFailure({ checkpoint: proof.to })).toBe('format');
    expect(await inclusionFailure(null)).toBe('format');
    const claims = {
      v: 1,
      event_id: '6a1f0b0e-8f3c-4a53-9d1b-2f0c8e3c1d2a',
      event_hash: 'ab'.repeat(32),
      occurred_at: 't',
      request_id: 'r',
      operation: 'o',
      outcome: 'succeeded',
      http_status: 201,
      reference: null,
      customer_id: null,
    };
    expect(await receiptFailure(await receiptWith(claims))).toBe('verified');
    expect(await receiptFailure(await receiptWith({ ...claims, v: 99 }))).toBe('format');
    expect(await receiptFailure(await receiptWith({ ...claims, http_status: '201' }))).toBe('format');
    expect(await receiptFailure(await receiptWith(['not', 'claims']))).toBe('format');
  });
});
