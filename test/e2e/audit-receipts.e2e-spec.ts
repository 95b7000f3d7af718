import { createHash, createPublicKey, generateKeyPairSync, randomUUID, verify as verifySignature } from 'node:crypto';
import { AuditSealer } from '../../src/audit/seal/domain/audit-sealer.service';
import { startTestApp, TEST_AUDIT_SIGNING_KEY, TestApp } from '../support/app';
import { buildCustomerRequest } from '../support/builders';
import { callApi } from '../support/http';
import { TestIssuer } from '../support/oidc';
import { waitFor } from '../support/wait-for';

interface Proof {
  event_id: string;
  event_hash: string;
  leaf_index: number;
  tree_size: number;
  inclusion_proof: string[];
  merkle_root: string;
  checkpoint: { seq: number; statement: string; head: string; key_id: string; signature: string };
}

/**
 * A partner's checker, written from RFC 9162 (2.1.3.2) and RFC 8037 for this test, with nothing of
 * the service's code: the key from the published set, the checkpoint's signature, the leaf and the
 * path up to the signed `merkle_root`.
 */
function verifiedOffline(proof: Proof, keys: { keys: (Record<string, string> & { kid: string })[] }): string[] {
  const failures: string[] = [];
  const jwk = keys.keys.find((key) => key.kid === proof.checkpoint.key_id);
  if (!jwk) return ['key'];
  const publicKey = createPublicKey({ key: jwk, format: 'jwk' });
  if (!verifySignature(null, Buffer.from(proof.checkpoint.statement), publicKey, Buffer.from(proof.checkpoint.signature, 'base64')))
    failures.push('checkpoint signature');
  const statement = JSON.parse(proof.checkpoint.statement) as { v: number; kind: string; merkle_root: string; events: number };
  // The tree the path climbs is the one the checkpoint signed: its root, and its size (a path fits other sizes too).
  if (statement.v !== 2 || statement.kind !== 'seal' || statement.merkle_root !== proof.merkle_root || statement.events !== proof.tree_size)
    failures.push('checkpoint root');
  const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
  let hash = sha(Buffer.from([0]), Buffer.from(proof.event_id.replace(/-/g, ''), 'hex'), Buffer.from(proof.event_hash, 'hex'));
  let index = proof.leaf_index;
  let last = proof.tree_size - 1;
  for (const sibling of proof.inclusion_proof.map((hex) => Buffer.from(hex, 'hex'))) {
    if (last === 0) return [...failures, 'path'];
    if (index % 2 === 1 || index === last) {
      hash = sha(Buffer.from([1]), sibling, hash);
      while (index % 2 === 0 && index !== 0) {
        index /= 2;
        last = Math.floor(last / 2);
      }
    } else {
      hash = sha(Buffer.from([1]), hash, sibling);
    }
    index = Math.floor(index / 2);
    last = Math.floor(last / 2);
  }
  if (last !== 0 || hash.toString('hex') !== statement.merkle_root) failures.push('path');
  return failures;
}

describe('receipts: proofs a partner checks offline that the audit log holds its events', () => {
  let t: TestApp;
  let endUsers: TestIssuer;
  let acme: string;
  let globex: string;
  const retired = generateKeyPairSync('ed25519').publicKey;

  const proofOf = (eventId: string, token = acme) =>
    callApi<Proof | { status: string; retry_after_seconds: number }>(t.baseUrl, 'GET', `/api/v1/receipts/${eventId}`, { token });
  const keySet = async () => (await (await fetch(`${t.baseUrl}/.well-known/audit-keys.json`)).json()) as { keys: (Record<string, string> & { kid: string })[] };
  /** A new customer's request, and the id of its terminal event (from the partner's own request log). */
  const newCustomerEvent = async (): Promise<string> => {
    const requestId = randomUUID();
    expect((await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: acme, body: buildCustomerRequest(), requestId })).status).toBe(201);
    const timeline = await callApi<{ events: { id: string; phase: string }[] }>(t.baseUrl, 'GET', `/api/v1/requests/${requestId}`, { token: acme });
    return timeline.body.data!.events.find((event) => event.phase === 'succeeded')!.id;
  };

  /**
   * Seals until the event's proof is there: the sealer seals only events no transaction still
   * running on the cluster (another test's) could precede, so one round may not reach it.
   */
  const sealedProof = async (eventId: string): Promise<Proof> => {
    const sealer = t.app.get(AuditSealer);
    const answer = await waitFor(
      async () => {
        await sealer.sealPending();
        const proof = await proofOf(eventId);
        return proof.status === 200 ? proof : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `the proof of ${eventId}` },
    );
    return answer.body.data as Proof;
  };

  beforeAll(async () => {
    endUsers = await TestIssuer.start();
    // Sealed when the test says (the sealer's own schedule off), so that "not sealed yet" is seen for certain.
    t = await startTestApp({
      AUDIT_SEALING: 'false',
      AUDIT_PUBLIC_KEYS: retired.export({ type: 'spki', format: 'pem' }).toString(),
      OIDC_ISSUER: endUsers.issuer,
      END_USER_PSEUDONYM_KEY: 'cmVjZWlwdHMtdGVzdC1wc2V1ZG9ueW0ta2V5LW9mLTMyYiE=',
    });
    acme = await t.createClient('partner', { tenant: 'acme' });
    globex = await t.createClient('partner', { tenant: 'globex' });
  });
  afterAll(async () => {
    await t?.close();
    await endUsers?.close();
  });

  it('when an event is not sealed yet, then 202 with Retry-After; once sealed, a proof that verifies offline against the published keys', async () => {
    const eventId = await newCustomerEvent();

    const pending = await proofOf(eventId);
    const proof = await sealedProof(eventId);

    expect([pending.status, pending.headers.get('retry-after'), pending.body.data]).toEqual([202, '2', { status: 'pending', retry_after_seconds: 2 }]);
    expect(proof).toMatchObject({ event_id: eventId, leaf_index: expect.any(Number), tree_size: expect.any(Number) });
    expect(verifiedOffline(proof, await keySet())).toEqual([]);
  });

  it('when a proof is altered (its event hash, a sibling, its place, the checkpoint’s statement), then the offline check names what failed', async () => {
    const eventId = await newCustomerEvent();
    const proof = await sealedProof(eventId);
    const keys = await keySet();
    const flip = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);

    expect(verifiedOffline({ ...proof, event_hash: flip(proof.event_hash) }, keys)).toEqual(['path']);
    expect(verifiedOffline({ ...proof, event_id: randomUUID() }, keys)).toEqual(['path']);
    if (proof.inclusion_proof.length > 0)
      expect(verifiedOffline({ ...proof, inclusion_proof: [flip(proof.inclusion_proof[0]), ...proof.inclusion_proof.slice(1)] }, keys)).toEqual(['path']);
    expect(
      verifiedOffline(
        { ...proof, checkpoint: { ...proof.checkpoint, statement: proof.checkpoint.statement.replace(/"sealed_at":"\d/, '"sealed_at":"1') } },
        keys,
      ),
    ).toEqual(['checkpoint signature']);
    expect(verifiedOffline({ ...proof, checkpoint: { ...proof.checkpoint, key_id: 'not-a-key' } }, keys)).toEqual(['key']);
  });

  it('when another tenant, an end user, or nobody asks for a proof, then 404, 403, 401: the proof is its own tenant’s', async () => {
    const eventId = await newCustomerEvent();
    await sealedProof(eventId);

    const theirs = await proofOf(eventId, globex);
    const never = await proofOf(randomUUID());

    expect([theirs.status, theirs.body.error!.code]).toEqual([404, 'RECEIPT.NOT_FOUND']);
    expect([never.status, never.body.error!.code]).toEqual([404, 'RECEIPT.NOT_FOUND']);
    expect((await proofOf(eventId, await endUsers.token())).status).toBe(403);
    expect((await callApi(t.baseUrl, 'GET', `/api/v1/receipts/${eventId}`)).status).toBe(401);
  });

  it('when the key set is read, then it holds the signing key and the retired one, as Ed25519 JWKs with their key ids, for anyone', async () => {
    const answer = await fetch(`${t.baseUrl}/.well-known/audit-keys.json`);
    const keys = ((await answer.json()) as { keys: Record<string, string>[] }).keys;
    const kidOf = (key: ReturnType<typeof createPublicKey>) =>
      createHash('sha256')
        .update(key.export({ type: 'spki', format: 'der' }))
        .digest('hex')
        .slice(0, 16);

    expect(answer.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(keys.map((key) => key.kid).sort()).toEqual([kidOf(createPublicKey(TEST_AUDIT_SIGNING_KEY)), kidOf(retired)].sort());
    expect(keys.every((key) => key.kty === 'OKP' && key.crv === 'Ed25519' && key.alg === 'EdDSA' && key.d === undefined)).toBe(true);
  });
});
