import { randomBytes, randomUUID } from 'node:crypto';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { devLogin } from '../../dev/identity-provider/dev-login';
import { RedisProofReplayRepository } from '../../src/auth/persistence/redis-proof-replay.repository';
import { proofReplayContract } from '../contracts/proof-replay.contract';
import { startTestApp, TestApp } from '../support/app';
import { buildCustomerRequest } from '../support/builders';
import { callApi } from '../support/http';
import { dpopProof, DpopKey, newDpopKey, TEST_AUDIENCE } from '../support/oidc';
import { clearSandbox, journal } from '../support/sandbox';

// Runs where a Redis answers: .ci/run sets TEST_REDIS_URL when 127.0.0.1:6379 does (jest.config.js
// leaves this file out otherwise).
const REDIS_URL = process.env.TEST_REDIS_URL!;

describe('RedisProofReplayRepository (a real Redis)', () => {
  let sut: RedisProofReplayRepository;

  beforeAll(async () => {
    sut = await RedisProofReplayRepository.connect(REDIS_URL);
  });

  afterAll(() => {
    sut.onModuleDestroy();
  });

  proofReplayContract(() => sut);

  it('when Redis does not answer, then a proof is neither accepted nor called a replay: DATABASE.UNAVAILABLE (the request fails closed)', async () => {
    const nowhere = await RedisProofReplayRepository.connect('redis://127.0.0.1:9');
    try {
      await expect(nowhere.useOnce(randomUUID(), new Date(Date.now() + 60_000))).rejects.toMatchObject({ code: 'DATABASE.UNAVAILABLE' });
    } finally {
      nowhere.onModuleDestroy();
    }
  });
});

describe('DPoP proofs remembered in Redis (DPOP_REPLAY_REDIS_URL), two replicas', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let replica: TestApp;
  let key: DpopKey;
  let token: string;
  let customerId: string;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    const env = {
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      DPOP_REPLAY_REDIS_URL: REDIS_URL,
    };
    t = await startTestApp(env);
    replica = await startTestApp(env, { database: t.database });
    key = await newDpopKey();
    token = (await devLogin({ issuer: idp.issuer, user: 'alex', audience: TEST_AUDIENCE, dpop: (method, url) => dpopProof(key, { method, url }) }))
      .access_token;
    const created = await callApi(t.baseUrl, 'POST', '/api/v1/customers', {
      headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, { method: 'POST', url: `${t.baseUrl}/api/v1/customers`, accessToken: token }) },
      body: buildCustomerRequest(),
    });
    customerId = created.body.data!.customer_id as string;
  });

  afterAll(async () => {
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
    await idp?.close();
  });

  it('when a proof is used once, then it is served; replayed on either replica, then 401 invalid_dpop_proof and nothing is sent', async () => {
    const path = `/api/v1/customers/${customerId}/balance`;
    const proof = await dpopProof(key, { method: 'GET', url: `${t.baseUrl}${path}`, accessToken: token });
    const send = (app: TestApp) => callApi(app.baseUrl, 'GET', path, { headers: { authorization: `DPoP ${token}`, dpop: proof } });

    const first = await send(t);
    await clearSandbox(t.sandbox);
    await clearSandbox(replica.sandbox);
    const again = await send(t);
    const elsewhere = await send(replica);

    expect(first.status).toBe(200);
    expect([again.status, again.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
    expect([elsewhere.status, elsewhere.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
    expect(await journal(t.sandbox)).toEqual([]);
    expect(await journal(replica.sandbox)).toEqual([]);
  });

  it('when proofs are used, then nothing is written to the dpop_proofs table', async () => {
    const rows = await t.asOwner<{ n: number }>('SELECT count(*)::int AS n FROM dpop_proofs');

    expect(rows[0].n).toBe(0);
  });
});
