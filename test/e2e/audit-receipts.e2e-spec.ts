import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, verify as verifySignature } from 'node:crypto';
import { CompactSign, decodeProtectedHeader } from 'jose';
import { Client } from 'pg';
import { AuditSealer } from '../../src/audit/seal/domain/audit-sealer.service';
import { runAuditVerify } from '../../src/audit/cli/audit-verify.command';
import { startTestApp, TEST_AUDIT_SIGNING_KEY, TestApp } from '../support/app';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { createTestDatabase } from '../support/database';
import { callApi } from '../support/http';
import { TestIssuer } from '../support/oidc';
import { clearSandbox, injectFault } from '../support/sandbox';
import { waitFor } from '../support/wait-for';
import {
  type AuditKeySet,
  type ConsistencyProof,
  ReceiptVerificationError,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
} from '../../clients/typescript/src/receipts';

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
  if (statement.v < 2 || statement.kind !== 'seal' || statement.merkle_root !== proof.merkle_root || statement.events !== proof.tree_size)
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
    expect(timeline.status).toBe(200);
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
      // sealedProof asks for a proof every 50 ms until the sealer reaches its event, which an open
      // transaction anywhere on the cluster can hold back: reads of the log are limited to 60 a minute.
      RATE_LIMIT_REQUEST_LOG_PER_MINUTE: '100000',
      UPSTREAM_TIMEOUT_MS: '1500',
      UPSTREAM_BREAKER_THRESHOLD: '1000',
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
    // A checkpoint of one event has an empty path: a sibling added to it must fail as a flipped one does.
    const [first, ...rest] = proof.inclusion_proof;
    const alteredPath = first === undefined ? ['0'.repeat(64)] : [flip(first), ...rest];
    expect(verifiedOffline({ ...proof, inclusion_proof: alteredPath }, keys)).toEqual(['path']);
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

  describe('the receipt of a write', () => {
    beforeEach(() => clearSandbox(t.sandbox));

    const receiptOf = (answer: { headers: Headers }) => answer.headers.get('audit-receipt');
    const createCustomer = (body: Record<string, unknown> = buildCustomerRequest(), requestId = randomUUID()) =>
      callApi<{ customer_id: string }>(t.baseUrl, 'POST', '/api/v1/customers', { token: acme, body, requestId });

    it('when a partner creates a customer, then the answer carries a receipt that verifies offline, naming the terminal event; once sealed, its proof leads from the receipt’s hash to a signed checkpoint', async () => {
      const body = buildCustomerRequest();
      const requestId = randomUUID();
      const created = await createCustomer(body, requestId);
      const keys = (await keySet()) as AuditKeySet;

      const claims = await verifyReceipt(receiptOf(created)!, keys);
      const proof = await sealedProof(claims.event_id);

      expect(created.status).toBe(201);
      expect(decodeProtectedHeader(receiptOf(created)!)).toEqual({
        alg: 'EdDSA',
        kid: createHash('sha256')
          .update(createPublicKey(TEST_AUDIT_SIGNING_KEY).export({ type: 'spki', format: 'der' }))
          .digest('hex')
          .slice(0, 16),
        typ: 'audit-receipt+jws',
      });
      expect(claims).toEqual({
        v: 1,
        event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        event_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        request_id: requestId,
        operation: 'customer.create',
        outcome: 'succeeded',
        http_status: 201,
        reference: body.reference,
        customer_id: created.body.data!.customer_id,
      });
      // The hash the receipt was signed over is the one the checkpoint sealed.
      expect(proof.event_hash).toBe(claims.event_hash);
      await expect(verifyInclusion(proof, keys, claims)).resolves.toBeUndefined();
      expect(verifiedOffline(proof, keys as Parameters<typeof verifiedOffline>[1])).toEqual([]);
    });

    it('when a write is replayed, then the replay carries the original’s receipt, byte for byte', async () => {
      const body = buildCustomerRequest();
      const original = await createCustomer(body);
      const replay = await createCustomer(body);
      const bankBody = buildBankAccountRequest({ customer_id: original.body.data!.customer_id });
      const opened = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body: bankBody });
      const reopened = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body: bankBody });

      expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(receiptOf(replay)).toBe(receiptOf(original));
      expect([opened.status, reopened.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(receiptOf(reopened)).toBe(receiptOf(opened));
      expect(receiptOf(opened)).not.toBe(receiptOf(original));
    });

    it('when a write is refused (400, 422) or its outcome is unknown (504), then its answer carries a receipt of that outcome; a read, or a caller without a tenant, gets none', async () => {
      const keys = (await keySet()) as AuditKeySet;
      const customerId = (await createCustomer()).body.data!.customer_id;
      const invalid = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
        token: acme,
        body: buildBankAccountRequest({ customer_id: customerId, currency: 'euro' }),
      });
      await injectFault(t.sandbox, { path: 'account', status: 400, count: 1 });
      const refused = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body: buildBankAccountRequest({ customer_id: customerId }) });
      await injectFault(t.sandbox, { path: 'account', latency_ms: 2500, drop: true, count: 1 });
      const timedOut = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body: buildBankAccountRequest({ customer_id: customerId }) });
      const balance = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: acme });
      const unauthenticated = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { body: buildCustomerRequest() });

      const outcomes = await Promise.all(
        [invalid, refused, timedOut].map(async (answer) => {
          const claims = await verifyReceipt(receiptOf(answer)!, keys);
          return [answer.status, claims.outcome, claims.http_status, claims.operation];
        }),
      );
      expect(outcomes).toEqual([
        [400, 'rejected', 400, 'bank_account.create'],
        [refused.status, 'rejected', refused.status, 'bank_account.create'],
        [504, 'unknown', 504, 'bank_account.create'],
      ]);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect([balance.status, receiptOf(balance)]).toEqual([200, null]);
      expect([unauthenticated.status, receiptOf(unauthenticated)]).toEqual([401, null]);
    });

    it('when a receipt is altered, re-signed with another key under the published kid, or names a key not published, then verifying names what failed; a proof of another event names the event hash', async () => {
      const keys = (await keySet()) as AuditKeySet;
      const first = receiptOf(await createCustomer())!;
      const claims = await verifyReceipt(first, keys);
      const [header, payload, signature] = first.split('.');
      const otherPayload = Buffer.from(JSON.stringify({ ...claims, outcome: 'rejected' })).toString('base64url');
      const impostor = generateKeyPairSync('ed25519').privateKey;
      const resigned = await new CompactSign(Buffer.from(JSON.stringify({ ...claims, http_status: 200 })))
        .setProtectedHeader(decodeProtectedHeader(first) as { alg: string })
        .sign(impostor);
      const unknownKey = await new CompactSign(Buffer.from(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'EdDSA', kid: 'not-published', typ: 'audit-receipt+jws' })
        .sign(impostor);
      const failureOf = (receipt: string) =>
        verifyReceipt(receipt, keys).then(
          () => 'verified',
          (error: unknown) => (error instanceof ReceiptVerificationError ? error.failed : String(error)),
        );

      expect(await failureOf(`${header}.${otherPayload}.${signature}`)).toBe('signature');
      expect(await failureOf(resigned)).toBe('signature');
      expect(await failureOf(unknownKey)).toBe('key');
      expect(await failureOf(`${header}.${payload}`)).toBe('format');
      expect(await failureOf(first)).toBe('verified');

      const otherEvent = await verifyReceipt(receiptOf(await createCustomer())!, keys);
      const otherProof = await sealedProof(otherEvent.event_id);
      await expect(verifyInclusion(otherProof, keys, claims)).rejects.toMatchObject({ failed: 'event_hash' });
      await expect(verifyInclusion({ ...otherProof, merkle_root: claims.event_hash }, keys)).rejects.toMatchObject({ failed: 'checkpoint' });
    });

    it('when the database owner alters or deletes a receipted event after it was sealed, then audit:verify names both, and the deleted one has no proof while its signed receipt stands', async () => {
      const keys = (await keySet()) as AuditKeySet;
      const [altered, deleted] = await Promise.all([createCustomer(), createCustomer()]);
      const alteredClaims = await verifyReceipt(receiptOf(altered)!, keys);
      const deletedClaims = await verifyReceipt(receiptOf(deleted)!, keys);
      await sealedProof(alteredClaims.event_id);
      await sealedProof(deletedClaims.event_id);
      const owner = new Client({ connectionString: t.database.ownerUrl });
      await owner.connect();
      const verify = async () => {
        const out: string[] = [];
        await runAuditVerify(
          [],
          { DATABASE_URL: t.database.url, AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY, LOG_LEVEL: 'warn' },
          { out: (line) => out.push(line), err: () => undefined },
        );
        return out.map((line) => JSON.parse(line) as { finding?: { kind: string; event_id?: string } }).flatMap((line) => (line.finding ? [line.finding] : []));
      };
      try {
        await owner.query('BEGIN');
        await owner.query('SET LOCAL session_replication_role = replica');
        const [{ record }] = (
          await owner.query<{ record: unknown }>('SELECT row_to_json(e) AS record FROM audit_events e WHERE id = $1', [deletedClaims.event_id])
        ).rows;
        await owner.query(`UPDATE audit_events SET http_status = 200 WHERE id = $1`, [alteredClaims.event_id]);
        await owner.query('DELETE FROM audit_events WHERE id = $1', [deletedClaims.event_id]);
        await owner.query('COMMIT');
        const findings = await verify();
        const proofOfDeleted = await proofOf(deletedClaims.event_id);

        expect(findings).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ kind: 'altered', event_id: alteredClaims.event_id }),
            expect.objectContaining({ kind: 'deleted', event_id: deletedClaims.event_id }),
          ]),
        );
        // The partner holds a signed receipt of an event the log no longer answers for.
        expect([proofOfDeleted.status, proofOfDeleted.body.error?.code]).toEqual([404, 'RECEIPT.NOT_FOUND']);

        await owner.query('BEGIN');
        await owner.query('SET LOCAL session_replication_role = replica');
        await owner.query(`UPDATE audit_events SET http_status = 201 WHERE id = $1`, [alteredClaims.event_id]);
        await owner.query('INSERT INTO audit_events SELECT * FROM json_populate_record(NULL::audit_events, $1)', [JSON.stringify(record)]);
        await owner.query('COMMIT');
      } finally {
        await owner.end();
      }
      expect(await verify()).toEqual([]);
    });
  });

  describe('consistency between checkpoints', () => {
    const consistency = (query: string, token = acme) => callApi<ConsistencyProof>(t.baseUrl, 'GET', `/api/v1/checkpoints/consistency?${query}`, { token });
    /** A new customer, sealed in a checkpoint of its own: that checkpoint. */
    const newCheckpoint = async () => (await sealedProof(await newCustomerEvent())).checkpoint;
    const failureOf = (proof: ConsistencyProof, keys: AuditKeySet, kept?: { statement: string }) =>
      verifyConsistency(proof, keys, kept).then(
        () => 'verified',
        (error: unknown) => (error instanceof ReceiptVerificationError ? error.failed : String(error)),
      );

    it('when a partner kept an earlier checkpoint, then the proof to a later one, or to the newest, verifies offline; altered, it names what failed', async () => {
      // One before the kept one, so that the kept tree is not empty and its consistency proof is not either.
      await newCheckpoint();
      const kept = await newCheckpoint();
      await newCheckpoint();
      await newCheckpoint();
      const later = await newCheckpoint();
      const keys = (await keySet()) as AuditKeySet;

      const toLater = await consistency(`from=${kept.seq}&to=${later.seq}`);
      const toNewest = await consistency(`from=${kept.seq}`);
      const proof = toLater.body.data!;
      const flip = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);

      expect(toLater.status).toBe(200);
      expect([proof.from, proof.to.seq]).toEqual([kept, later.seq]);
      expect(JSON.parse(proof.to.statement)).toMatchObject({ v: 3, log_size: expect.any(Number), log_root: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(await failureOf(proof, keys, kept)).toBe('verified');
      expect(await failureOf(toNewest.body.data!, keys, kept)).toBe('verified');
      expect(toNewest.body.data!.to.seq).toBeGreaterThanOrEqual(later.seq);
      expect(JSON.parse(kept.statement).log_size).toBeGreaterThan(0);
      expect(await failureOf({ ...proof, consistency_proof: [flip(proof.consistency_proof[0]), ...proof.consistency_proof.slice(1)] }, keys)).toBe(
        'consistency',
      );
      expect(await failureOf({ ...proof, inclusion_proof: [flip(proof.inclusion_proof[0]), ...proof.inclusion_proof.slice(1)] }, keys)).toBe('path');
      expect(await failureOf(proof, keys, later)).toBe('checkpoint');
      expect(await failureOf({ ...proof, from: proof.to, to: proof.from }, keys)).toBe('checkpoint');
      expect(await failureOf({ ...proof, to: { ...proof.to, statement: proof.to.statement.replace('"log_size":', '"log_size":1') } }, keys)).toBe(
        'checkpoint_signature',
      );
      expect(await failureOf(proof, { keys: [] })).toBe('key');
    });

    it('when the query is wrong, or names no checkpoint, or the newest, then 400, 404 CHECKPOINT.NOT_FOUND, 404 CHECKPOINT.PROOF_UNAVAILABLE; an end user or nobody gets 403, 401', async () => {
      const kept = await newCheckpoint();
      const newest = await newCheckpoint();

      const backwards = await consistency(`from=${newest.seq}&to=${kept.seq}`);
      const garbage = await consistency('from=1e3');
      const missing = await consistency('from=99999999');
      const fromNewest = await consistency(`from=${newest.seq}`);

      expect([backwards.status, backwards.body.error!.code, backwards.body.error!.fields]).toEqual([
        400,
        'REQUEST.VALIDATION_FAILED',
        [expect.objectContaining({ field: 'to' })],
      ]);
      expect([garbage.status, garbage.body.error!.code]).toEqual([400, 'REQUEST.VALIDATION_FAILED']);
      expect([missing.status, missing.body.error!.code]).toEqual([404, 'CHECKPOINT.NOT_FOUND']);
      // Nothing after the newest yet (sealing is the test's): no proof to give.
      expect([fromNewest.status, fromNewest.body.error!.code]).toEqual([404, 'CHECKPOINT.PROOF_UNAVAILABLE']);
      expect((await consistency(`from=${kept.seq}`, await endUsers.token())).status).toBe(403);
      expect((await callApi(t.baseUrl, 'GET', `/api/v1/checkpoints/consistency?from=${kept.seq}`)).status).toBe(401);
    });

    it('when the database owner alters the stored tree, then no proof is given through it and audit:verify names it; restored, both are as before', async () => {
      const kept = await newCheckpoint();
      // A window from here starts its walk at `later`, from the stored tree.
      const since = new Date().toISOString();
      const later = await newCheckpoint();
      const size = (JSON.parse(later.statement) as { log_size: number }).log_size;
      const verify = async (args: string[] = []) => {
        const out: string[] = [];
        await runAuditVerify(
          args,
          { DATABASE_URL: t.database.url, AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY, LOG_LEVEL: 'warn' },
          { out: (line) => out.push(line), err: () => undefined },
        );
        return out.map((line) => JSON.parse(line) as { finding?: { kind: string } }).flatMap((line) => (line.finding ? [line.finding.kind] : []));
      };
      const owner = new Client({ connectionString: t.database.ownerUrl });
      await owner.connect();
      const asOwner = async (sql: string, params: unknown[]) => {
        await owner.query('BEGIN');
        await owner.query('SET LOCAL session_replication_role = replica');
        await owner.query(sql, params);
        await owner.query('COMMIT');
      };
      // Each change is undone, whatever happens, before the connection ends.
      const undo: (() => Promise<void>)[] = [];
      const alterRow = async (leaf: number) => {
        const [{ nodes }] = (await owner.query<{ nodes: Buffer }>('SELECT nodes FROM audit_log_tree WHERE leaf = $1', [leaf])).rows;
        await asOwner('UPDATE audit_log_tree SET nodes = $2 WHERE leaf = $1', [leaf, Buffer.alloc(nodes.length, 7)]);
        const restore = () => asOwner('UPDATE audit_log_tree SET nodes = $2 WHERE leaf = $1', [leaf, nodes]);
        undo.push(restore);
        return async () => {
          await restore();
          undo.splice(undo.indexOf(restore), 1);
        };
      };
      try {
        // The leaf just before `later`: on every path to `later`'s tree.
        const restoreLast = await alterRow(size - 1);
        const refused = await consistency(`from=${kept.seq}&to=${later.seq}`);
        const findings = await verify();
        const windowed = await verify(['--from', since]);
        await restoreLast();
        // The first leaf: inside the tree, on the frontier verify ends with only while the log holds one checkpoint.
        const restoreFirst = await alterRow(0);
        const deep = await verify();
        await restoreFirst();
        // A leaf past the last checkpoint's, which the next checkpoint would sign into the log's tree.
        const [{ next }] = (await owner.query<{ next: number }>('SELECT max(leaf)::int + 1 AS next FROM audit_log_tree')).rows;
        const removeForged = () => asOwner('DELETE FROM audit_log_tree WHERE leaf = $1', [next]);
        undo.push(removeForged);
        await asOwner('INSERT INTO audit_log_tree (leaf, seq, nodes) VALUES ($1, $2, $3)', [next, 1_000_000_000, Buffer.alloc(32, 7)]);
        const beyond = await verify();
        await removeForged();
        undo.pop();

        expect([refused.status, refused.body.error!.code]).toEqual([404, 'CHECKPOINT.PROOF_UNAVAILABLE']);
        expect(findings).toContain('log_tree_altered');
        expect(windowed).toEqual(['log_tree_altered']);
        expect(await verify(['--from', since])).toEqual([]);
        expect(size).toBeGreaterThan(1);
        expect(deep).toContain('log_tree_altered');
        expect(beyond).toEqual(['log_tree_altered']);
        expect((await consistency(`from=${kept.seq}&to=${later.seq}`)).status).toBe(200);
        expect(await verify()).toEqual([]);
      } finally {
        for (const step of undo.reverse()) await step();
        await owner.end();
      }
    });
  });
});

describe('receipts across a key rotation', () => {
  it('when the signing key is rotated, then receipts and proofs made with the old key still verify with the published keys, and new ones name the new key', async () => {
    const database = await createTestDatabase();
    const oldKey = TEST_AUDIT_SIGNING_KEY;
    const newKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const oldPublic = createPublicKey(createPrivateKey(oldKey)).export({ type: 'spki', format: 'pem' }).toString();
    type Proof = Parameters<typeof verifyInclusion>[0];
    const apps: TestApp[] = [];
    try {
      const before = await startTestApp({ AUDIT_SEALING: 'false', AUDIT_SIGNING_KEY: oldKey }, { database });
      apps.push(before);
      const token = await before.createClient('partner', { tenant: 'acme' });
      const oldReceipt = (await callApi(before.baseUrl, 'POST', '/api/v1/customers', { token, body: buildCustomerRequest() })).headers.get('audit-receipt')!;
      const oldKeys = (await (await fetch(`${before.baseUrl}/.well-known/audit-keys.json`)).json()) as AuditKeySet;
      const claims = await verifyReceipt(oldReceipt, oldKeys);
      // Sealed under the old key, before it is retired.
      const sealer = before.app.get(AuditSealer);
      await waitFor(
        async () => {
          await sealer.sealPending();
          return (await callApi(before.baseUrl, 'GET', `/api/v1/receipts/${claims.event_id}`, { token })).status === 200 || undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50, what: 'the event sealed under the old key' },
      );
      await apps.pop()!.close();

      const after = await startTestApp({ AUDIT_SEALING: 'false', AUDIT_SIGNING_KEY: newKey, AUDIT_PUBLIC_KEYS: oldPublic }, { database });
      apps.push(after);
      const keys = (await (await fetch(`${after.baseUrl}/.well-known/audit-keys.json`)).json()) as AuditKeySet;
      const proof = (await callApi<Proof>(after.baseUrl, 'GET', `/api/v1/receipts/${claims.event_id}`, { token })).body.data!;
      const newReceipt = (await callApi(after.baseUrl, 'POST', '/api/v1/customers', { token, body: buildCustomerRequest() })).headers.get('audit-receipt')!;
      const oldKid = decodeProtectedHeader(oldReceipt).kid;

      expect(keys.keys).toHaveLength(2);
      expect(proof.checkpoint.key_id).toBe(oldKid);
      await expect(verifyReceipt(oldReceipt, keys)).resolves.toEqual(claims);
      await expect(verifyInclusion(proof, keys, claims)).resolves.toBeUndefined();
      await expect(verifyReceipt(newReceipt, keys)).resolves.toMatchObject({ operation: 'customer.create' });
      expect(decodeProtectedHeader(newReceipt).kid).not.toBe(oldKid);
      // Without the retired key, the old receipt and its proof name the key as what failed.
      const withoutOld = { keys: keys.keys.filter((key) => key.kid !== oldKid) };
      await expect(verifyReceipt(oldReceipt, withoutOld)).rejects.toMatchObject({ failed: 'key' });
      await expect(verifyInclusion(proof, withoutOld, claims)).rejects.toMatchObject({ failed: 'key' });
    } finally {
      for (const app of apps) await app.close();
      await database.drop();
    }
  });
});
