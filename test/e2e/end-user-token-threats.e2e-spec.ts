import { randomBytes } from 'node:crypto';
import { JWK, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { TestApp, startTestApp } from '../support/app';
import { callApi, createCustomer } from '../support/http';
import { DpopKey, IssuerAnswer, TEST_AUDIENCE, TestIssuer, dpopProof, newDpopKey, unsignedDpopProof } from '../support/oidc';
import { rawExchange } from '../support/raw-http';

/**
 * Findings of the security review of end-user tokens (docs/security.md, "End users", threat
 * model), over HTTP: one replica trusting a hand-made issuer whose tokens are good, and issuers
 * whose keys cannot be read.
 */
describe('end-user tokens: the threats a security review found', () => {
  let issuer: TestIssuer;
  const broken: Partial<Record<IssuerAnswer, TestIssuer>> = {};
  let t: TestApp;
  const ME = '/api/v1/me';

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    for (const answer of ['unavailable', 'garbage'] as const) {
      broken[answer] = await TestIssuer.start();
      broken[answer].jwksAnswer = answer;
    }
    t = await startTestApp({
      OIDC_ISSUER: issuer.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_ISSUERS: JSON.stringify(Object.values(broken).map(({ issuer }) => ({ issuer, audience: TEST_AUDIENCE, tenant: 'globex' }))),
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
    });
  });

  afterAll(async () => {
    await t?.close();
    await issuer?.close();
    for (const other of Object.values(broken)) await other.close();
  });

  describe('finding 1: a forged DPoP proof must not lock its key out of a replica', () => {
    /** An app's key for proofs signed with `alg`. */
    const appKey = async (alg: 'ES256' | 'PS256'): Promise<DpopKey> => {
      if (alg === 'ES256') return newDpopKey();
      const { privateKey, publicKey } = await generateKeyPair('PS256', { extractable: true, modulusLength: 2048 });
      const publicJwk = await exportJWK(publicKey);
      return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
    };

    it.each<[string, 'ES256' | 'PS256', (jwk: JWK) => Record<string, unknown>]>([
      ['header alg ECDH-ES', 'ES256', (jwk) => ({ alg: 'ECDH-ES', typ: 'dpop+jwt', jwk })],
      ['header alg ES384 (another curve)', 'ES256', (jwk) => ({ alg: 'ES384', typ: 'dpop+jwt', jwk })],
      ['jwk.alg ECDH-ES under header alg ES256', 'ES256', (jwk) => ({ alg: 'ES256', typ: 'dpop+jwt', jwk: { ...jwk, alg: 'ECDH-ES' } })],
      ['header alg RS256 where the victim signs PS256', 'PS256', (jwk) => ({ alg: 'RS256', typ: 'dpop+jwt', jwk })],
    ])(
      'finding 1: when a forged proof carries the victim’s public key with %s and a junk signature, then it is refused and the victim’s next valid proof is still accepted',
      async (_, victimAlg, forgedHeader) => {
        const victim = await appKey(victimAlg);
        const token = await issuer.token({ sub: 'victim', cnf: { jkt: victim.jkt } });
        const url = `${t.baseUrl}${ME}`;
        const forged = unsignedDpopProof(forgedHeader(victim.publicJwk), { method: 'GET', url, accessToken: token });
        const valid = await dpopProof(victim, { method: 'GET', url, accessToken: token }, { header: { alg: victimAlg } });

        const attack = await callApi(t.baseUrl, 'GET', ME, { headers: { authorization: `DPoP ${token}`, dpop: forged } });
        const next = await callApi(t.baseUrl, 'GET', ME, { headers: { authorization: `DPoP ${token}`, dpop: valid } });

        expect([attack.status, attack.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
        expect([next.status, next.body.error?.code ?? null]).toEqual([200, null]);
      },
    );
  });

  describe('finding 7: an issuer whose keys cannot be read is unavailable, not a reason to throw the token away', () => {
    it.each(['unavailable', 'garbage'] as const)(
      'finding 7: when the issuer’s JWKS answers %s, then a token from it is 503 AUTH.ISSUER_UNAVAILABLE with Retry-After, not 401',
      async (answer) => {
        const token = await broken[answer]!.token();

        const answered = await callApi(t.baseUrl, 'GET', ME, { token });

        expect([answered.status, answered.body.error?.code]).toEqual([503, 'AUTH.ISSUER_UNAVAILABLE']);
        expect(answered.headers.get('retry-after')).toBe('5');
        expect(answered.headers.get('www-authenticate')).toBeNull();
      },
    );
  });

  describe('finding 8: only access tokens (typ at+jwt, RFC 9068) are accepted', () => {
    it('finding 8: when a token of the trusted issuer says no typ, then it is 401 with error="invalid_token"', async () => {
      const token = await issuer.token({ sub: 'untyped' }, { header: { typ: undefined } });

      const answered = await callApi(t.baseUrl, 'GET', ME, { token });

      expect(answered.status).toBe(401);
      expect(answered.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway", error="invalid_token"');
    });

    it('finding 8: when a token of the trusted issuer is typed JWT (an ID token for a client), then it is 401 with error="invalid_token"', async () => {
      const token = await issuer.token({ sub: 'id-token', aud: TEST_AUDIENCE }, { header: { typ: 'JWT' } });

      const answered = await callApi(t.baseUrl, 'GET', ME, { token });

      expect(answered.status).toBe(401);
      expect(answered.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway", error="invalid_token"');
    });

    it('when a token of the trusted issuer is typed at+jwt, then it is accepted (the refusals above are about the type)', async () => {
      const answered = await callApi(t.baseUrl, 'GET', ME, { token: await issuer.token({ sub: 'typed' }) });

      expect(answered.status).toBe(200);
    });
  });
});

describe('end users’ tokens: binding a customer, and the URL a proof names', () => {
  let issuer: TestIssuer;
  let other: TestIssuer;
  let t: TestApp;
  let partner: string;
  const PUBLIC = 'https://api.partner.example';

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    other = await TestIssuer.start();
    t = await startTestApp({
      OIDC_ISSUER: issuer.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_ISSUERS: JSON.stringify([{ issuer: other.issuer, audience: TEST_AUDIENCE, tenant: 'globex' }]),
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      PUBLIC_BASE_URL: PUBLIC,
    });
    partner = await t.createClient('partner');
  });

  afterAll(async () => {
    await t?.close();
    await issuer?.close();
    await other?.close();
  });

  it('finding 14: when a partner binds a customer to an end user of another tenant’s issuer, then 400 and the customer stays free', async () => {
    const customerId = await createCustomer(t.baseUrl, partner);

    const foreign = await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, {
      token: partner,
      body: { subject: 'demo', issuer: other.issuer },
    });
    const own = await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, {
      token: partner,
      body: { subject: 'demo', issuer: issuer.issuer },
    });

    expect(foreign.status).toBe(400);
    expect(foreign.body.error?.fields?.map((field) => field.field)).toEqual(['issuer']);
    expect(own.status).toBe(200);
  });

  it('finding 15: when a DPoP-bound token comes with two DPoP headers, then 401 says to send exactly one', async () => {
    const key = await newDpopKey();
    const token = await issuer.token({ cnf: { jkt: key.jkt } });
    const url = `${PUBLIC}/api/v1/me`;
    const proofs = [await dpopProof(key, { method: 'GET', url, accessToken: token }), await dpopProof(key, { method: 'GET', url, accessToken: token })];

    const answer = await rawExchange(
      t.baseUrl,
      `GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: DPoP ${token}\r\nDPoP: ${proofs[0]}\r\nDPoP: ${proofs[1]}\r\nConnection: close\r\n\r\n`,
    );

    expect(answer.status).toBe(401);
    expect(answer.body?.error?.details).toBe('Send exactly one DPoP header');
  });

  it('finding 2: when PUBLIC_BASE_URL is set, then a DPoP proof must name it: one made for the Host the caller sent is refused', async () => {
    const key = await newDpopKey();
    const token = await issuer.token({ cnf: { jkt: key.jkt } });
    const request = (htu: string, host: string) =>
      dpopProof(key, { method: 'GET', url: htu, accessToken: token }).then((proof) =>
        rawExchange(t.baseUrl, `GET /api/v1/me HTTP/1.1\r\nHost: ${host}\r\nAuthorization: DPoP ${token}\r\nDPoP: ${proof}\r\nConnection: close\r\n\r\n`),
      );

    const forHostSent = await request('http://attacker.example/api/v1/me', 'attacker.example');
    const forPublicOrigin = await request(`${PUBLIC}/api/v1/me`, 'attacker.example');

    expect(forHostSent.status).toBe(401);
    expect(forHostSent.body?.error?.details).toBe('The DPoP proof is for another URL');
    expect(forPublicOrigin.status).toBe(200);
  });
});
