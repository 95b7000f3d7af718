import { createHmac } from 'node:crypto';
import { dpopProof, newDpopKey, newIssuerKey, TEST_AUDIENCE, TestIssuer } from '../../../test/support/oidc';
import { InMemoryProofReplay } from '../../../test/support/fakes';
import { nestLogsOfEachTest } from '../../../test/support/nest-logs';
import { TokenPresentation } from '../domain/access-tokens.port';
import { DpopProofs } from './dpop-proofs';
import { IssuerDirectory } from './issuer-metadata';
import { JoseAccessTokens } from './jose-access-tokens';

const URL_ = 'http://127.0.0.1:3000/api/v1/customers/5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44/balance';
const bearer: TokenPresentation = { scheme: 'bearer', proof: undefined, method: 'GET', url: URL_ };

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe(JoseAccessTokens.name, () => {
  let issuer: TestIssuer;
  let proofs: InMemoryProofReplay;
  const settings = { clockSkewSeconds: 30, maxLifetimeSeconds: 3600, requireDpop: false };

  /** A JWKS is fetched again for an unknown kid at most every 200 ms here (30 s in production). */
  const COOLDOWN_MS = 200;
  const tokens = (overrides: Partial<typeof settings> = {}) =>
    new JoseAccessTokens(
      [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
      { ...settings, ...overrides },
      new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      new IssuerDirectory({ refetchCooldownMs: COOLDOWN_MS }),
    );

  const logs = nestLogsOfEachTest();
  /** What an operator reads when the issuer fails: a warning naming the issuer, never the token. */
  const warnedAbout = (message: string, token: string) => {
    const warnings = logs.lines.filter((line) => line.level === 'warn' && line.context === 'Issuers');
    expect(warnings.map((line) => line.message)).toContain(message);
    expect(warnings.every((line) => line.fields?.issuer !== undefined)).toBe(true);
    expect(JSON.stringify(logs.lines)).not.toContain(token);
  };

  beforeEach(async () => {
    issuer = await TestIssuer.start();
    proofs = new InMemoryProofReplay();
  });

  afterEach(() => issuer.close());

  it('when the token is the issuer’s, for this audience and current, then the end user is its subject in the issuer’s tenant with its scopes', async () => {
    const user = await tokens().verify(await issuer.token({ sub: 'ada', scope: 'balances:read  customers:write' }), bearer);

    expect(user).toEqual({
      kind: 'end_user',
      issuer: issuer.issuer,
      subject: 'ada',
      tenant: 'acme',
      scopes: ['balances:read', 'customers:write'],
      senderConstrained: false,
    });
  });

  const refusals: [string, () => Promise<string>][] = [
    ['from an issuer not trusted', () => issuer.token({ iss: 'http://127.0.0.1:1/other' })],
    ['signed by a key the issuer does not hold (same kid)', async () => issuer.token({}, { key: { ...(await newIssuerKey(issuer.keys[0].publicJwk.kid)) } })],
    ['expired beyond the leeway', () => issuer.token({}, { now: Math.floor(Date.now() / 1000) - 400, lifetimeSeconds: 300 })],
    ['not valid yet (nbf beyond the leeway)', () => issuer.token({ nbf: Math.floor(Date.now() / 1000) + 120 })],
    ['issued in the future beyond the leeway', () => issuer.token({ iat: Math.floor(Date.now() / 1000) + 120 })],
    ['for another audience', () => issuer.token({ aud: 'urn:another-api' })],
    ['living longer than the most allowed', () => issuer.token({}, { lifetimeSeconds: 7200 })],
    ['without a subject', () => issuer.token({ sub: undefined })],
    ['typed as another kind of JWT (an ID token)', () => issuer.token({}, { header: { typ: 'JWT' } })],
    [
      'unsigned (alg none)',
      async () => `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({ iss: issuer.issuer, aud: TEST_AUDIENCE, sub: 'x', iat: 1, exp: 9e9 })}.`,
    ],
    [
      'signed with HMAC, the public key as the secret',
      async () => {
        const head = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: issuer.keys[0].publicJwk.kid })}.${b64({ iss: issuer.issuer, aud: TEST_AUDIENCE, sub: 'x', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 })}`;
        const signature = createHmac('sha256', JSON.stringify(issuer.keys[0].publicJwk)).update(head).digest('base64url');
        return `${head}.${signature}`;
      },
    ],
    ['not a JWT at all', async () => 'eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln'],
    ['far too long', async () => `${'a'.repeat(9000)}.b.c`],
  ];

  it.each(refusals)('when the token is %s, then it is refused as invalid_token', async (_, make) => {
    await expect(tokens().verify(await make(), bearer)).rejects.toMatchObject({
      code: 'AUTH.INVALID_TOKEN',
      challenge: 'Bearer realm="partner-gateway", error="invalid_token"',
    });
  });

  it('when the issuer rotates to a new key, then tokens signed by it are accepted without a restart', async () => {
    const sut = tokens();
    await sut.verify(await issuer.token(), bearer);
    const rotated = await newIssuerKey();
    issuer.keys = [rotated];
    // The rotation comes after the cooldown: in production, minutes after the last fetch.
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 50));

    const user = await sut.verifyEndUser(await issuer.token({ sub: 'after-rotation' }, { key: rotated }), bearer);

    expect(user.subject).toBe('after-rotation');
    expect(issuer.jwksFetches).toBe(2);
  });

  it('when a flood of tokens names unknown kids, then the JWKS is fetched again at most once and each is refused', async () => {
    const sut = new JoseAccessTokens(
      [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
      settings,
      new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      new IssuerDirectory(),
    );
    await sut.verify(await issuer.token(), bearer);
    const strangers = await Promise.all(Array.from({ length: 50 }, async () => issuer.token({}, { key: await newIssuerKey() })));

    const results = await Promise.allSettled(strangers.map((token) => sut.verify(token, bearer)));

    expect(results.every((result) => result.status === 'rejected' && (result.reason as { code: string }).code === 'AUTH.INVALID_TOKEN')).toBe(true);
    // The first fetch, and none within the cooldown that follows it (30 s).
    expect(issuer.jwksFetches).toBe(1);
    expect(issuer.discoveryFetches).toBe(1);
  });

  it('when the issuer cannot be reached, then the answer is that it is unavailable (503), not that the token is bad', async () => {
    const token = await issuer.token();
    await issuer.close();

    await expect(tokens().verify(token, bearer)).rejects.toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE' });
    warnedAbout('The OpenID provider’s discovery failed', token);
  });

  it('when the discovery document names another issuer, then the issuer is unavailable and no token is accepted', async () => {
    const sut = new JoseAccessTokens(
      [{ issuer: `${issuer.issuer}/`, audience: TEST_AUDIENCE, tenant: 'acme' }],
      settings,
      new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      new IssuerDirectory(),
    );
    const token = await issuer.token({ iss: `${issuer.issuer}/` });
    await expect(sut.verify(token, bearer)).rejects.toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE' });
    warnedAbout('The OpenID provider’s discovery failed', token);
  });

  it('finding 8: when a token of the trusted issuer says no typ, then it is refused as invalid_token (RFC 9068 section 4)', async () => {
    await expect(tokens().verify(await issuer.token({}, { header: { typ: undefined } }), bearer)).rejects.toMatchObject({ code: 'AUTH.INVALID_TOKEN' });
  });

  it.each([
    ['answers 503', 'unavailable'],
    ['answers what is not JSON', 'garbage'],
  ] as const)('finding 7: when the issuer’s JWKS %s, then the issuer is unavailable (503), not the token bad', async (_, answer) => {
    issuer.jwksAnswer = answer;
    const token = await issuer.token();

    await expect(tokens().verify(token, bearer)).rejects.toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE', retryAfterSeconds: 5 });
    warnedAbout('The OpenID provider’s keys (JWKS) could not be read', token);
  });

  it('when the issuer’s JWKS does not answer in time, then the issuer is unavailable (503)', async () => {
    issuer.jwksAnswer = 'hang';
    const sut = new JoseAccessTokens(
      [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
      settings,
      new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      new IssuerDirectory({ fetchTimeoutMs: 200 }),
    );
    const token = await issuer.token();

    await expect(sut.verify(token, bearer)).rejects.toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE' });
    warnedAbout('The OpenID provider’s keys (JWKS) could not be read', token);
  });

  it('when the issuer’s JWKS fails, then calls one after another cost one fetch until the failure is five seconds old, and the JWKS is read again after', async () => {
    let now = Date.now();
    const clock = () => now;
    const sut = new JoseAccessTokens(
      [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
      settings,
      new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      new IssuerDirectory({ now: clock }),
      clock,
    );
    issuer.jwksAnswer = 'unavailable';
    const token = await issuer.token();

    const flood: PromiseSettledResult<unknown>[] = [];
    for (let call = 0; call < 20; call += 1) flood.push(...(await Promise.allSettled([sut.verify(token, bearer)])));
    const fetchesDuringFailure = issuer.jwksFetches;
    issuer.jwksAnswer = 'keys';
    now += 5_000;
    const after = await sut.verifyEndUser(token, bearer);

    expect(flood.every((result) => result.status === 'rejected' && (result.reason as { code: string }).code === 'AUTH.ISSUER_UNAVAILABLE')).toBe(true);
    expect(fetchesDuringFailure).toBe(1);
    expect(after.subject).toBe('user-1');
    warnedAbout('The OpenID provider’s keys (JWKS) could not be read', token);
  });

  describe('finding 9: a remembered verification does not outlive its key by more than ten minutes', () => {
    const MINUTE = 60_000;

    it('finding 9: when the key that signed a remembered token leaves the JWKS, then the token is still accepted five minutes after its keys were read, and refused just after ten', async () => {
      let now = Date.now();
      const clock = () => now;
      const sut = new JoseAccessTokens(
        [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
        settings,
        new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
        new IssuerDirectory({ refetchCooldownMs: COOLDOWN_MS, now: clock }),
        clock,
      );
      const token = await issuer.token({}, { lifetimeSeconds: 3600 });
      await sut.verify(token, bearer);
      issuer.keys = [await newIssuerKey()];

      now += 5 * MINUTE;
      const fiveMinutesOn = await sut.verifyEndUser(token, bearer);
      const fetchesAfterFive = issuer.jwksFetches;
      now += 5 * MINUTE + 1_000;
      const tenMinutesOn = sut.verify(token, bearer);

      expect(fiveMinutesOn.subject).toBe('user-1');
      // Accepted from memory: the JWKS was not read again.
      expect(fetchesAfterFive).toBe(1);
      await expect(tenMinutesOn).rejects.toMatchObject({ code: 'AUTH.INVALID_TOKEN' });
    });
  });

  describe('DPoP (RFC 9449)', () => {
    it('when a bound token comes with a valid proof, then it is accepted as sender-constrained; the same proof again is a replay', async () => {
      const key = await newDpopKey();
      const token = await issuer.token({ cnf: { jkt: key.jkt } });
      const proof = await dpopProof(key, { method: 'GET', url: URL_, accessToken: token });
      const sut = tokens();

      expect(await sut.verify(token, { scheme: 'dpop', proof, method: 'GET', url: URL_ })).toMatchObject({ senderConstrained: true, subject: 'user-1' });
      await expect(sut.verify(token, { scheme: 'dpop', proof, method: 'GET', url: URL_ })).rejects.toMatchObject({
        code: 'AUTH.INVALID_DPOP_PROOF',
        details: 'The DPoP proof was already used',
        challenge: expect.stringMatching(/^DPoP realm="partner-gateway", error="invalid_dpop_proof", algs="/),
      });
    });

    it('when a bound token is sent as a bearer token, then it is refused as AUTH.DPOP_REQUIRED (a stolen token without its key is useless)', async () => {
      const key = await newDpopKey();
      await expect(tokens().verify(await issuer.token({ cnf: { jkt: key.jkt } }), bearer)).rejects.toMatchObject({
        code: 'AUTH.DPOP_REQUIRED',
        challenge: expect.stringMatching(/^DPoP realm="partner-gateway", error="invalid_token"/),
      });
    });

    it('when an unbound token is sent under the DPoP scheme (AUTH.INVALID_TOKEN), or as a bearer token in FAPI mode (AUTH.DPOP_REQUIRED), then it is refused with a DPoP challenge', async () => {
      const token = await issuer.token();
      const key = await newDpopKey();
      const proof = await dpopProof(key, { method: 'GET', url: URL_, accessToken: token });
      const dpopChallenge = expect.stringMatching(/^DPoP realm="partner-gateway", error="invalid_token"/);

      await expect(tokens().verify(token, { scheme: 'dpop', proof, method: 'GET', url: URL_ })).rejects.toMatchObject({
        code: 'AUTH.INVALID_TOKEN',
        challenge: dpopChallenge,
      });
      await expect(tokens({ requireDpop: true }).verify(token, bearer)).rejects.toMatchObject({ code: 'AUTH.DPOP_REQUIRED', challenge: dpopChallenge });
    });

    const badProofs: [string, (key: Awaited<ReturnType<typeof newDpopKey>>, token: string) => Promise<string | string[] | undefined>][] = [
      ['missing', async () => undefined],
      [
        'sent twice',
        async (key, token) => [
          await dpopProof(key, { method: 'GET', url: URL_, accessToken: token }),
          await dpopProof(key, { method: 'GET', url: URL_, accessToken: token }),
        ],
      ],
      ['signed by another key', async (_, token) => dpopProof(await newDpopKey(), { method: 'GET', url: URL_, accessToken: token })],
      ['for another method', async (key, token) => dpopProof(key, { method: 'POST', url: URL_, accessToken: token })],
      ['for another URL', async (key, token) => dpopProof(key, { method: 'GET', url: 'http://127.0.0.1:3000/api/v1/me', accessToken: token })],
      ['for another host', async (key, token) => dpopProof(key, { method: 'GET', url: URL_.replace('127.0.0.1:3000', 'evil.example'), accessToken: token })],
      ['for another access token', async (key) => dpopProof(key, { method: 'GET', url: URL_, accessToken: 'another-token' })],
      ['without ath', async (key) => dpopProof(key, { method: 'GET', url: URL_ })],
      [
        'too old',
        async (key, token) => dpopProof(key, { method: 'GET', url: URL_, accessToken: token }, { claims: { iat: Math.floor(Date.now() / 1000) - 120 } }),
      ],
      [
        'from the future',
        async (key, token) => dpopProof(key, { method: 'GET', url: URL_, accessToken: token }, { claims: { iat: Math.floor(Date.now() / 1000) + 120 } }),
      ],
      ['typed otherwise', async (key, token) => dpopProof(key, { method: 'GET', url: URL_, accessToken: token }, { header: { typ: 'JWT' } })],
      ['without a jti', async (key, token) => dpopProof(key, { method: 'GET', url: URL_, accessToken: token }, { claims: { jti: undefined } })],
      [
        'carrying a private key in its header',
        async (key, token) => dpopProof(key, { method: 'GET', url: URL_, accessToken: token }, { header: { jwk: { ...key.publicJwk, d: 'AAAA' } } }),
      ],
      ['not a JWS', async () => 'not-a-proof'],
    ];

    it.each(badProofs)('when the proof is %s, then the request is refused with invalid_dpop_proof', async (_, make) => {
      const key = await newDpopKey();
      const token = await issuer.token({ cnf: { jkt: key.jkt } });

      await expect(tokens().verify(token, { scheme: 'dpop', proof: await make(key, token), method: 'GET', url: URL_ })).rejects.toMatchObject({
        code: 'AUTH.INVALID_DPOP_PROOF',
      });
    });

    it('when the proof’s URL differs only by a query, a fragment, a default port or letter case of the host, then it is the same URL', async () => {
      const key = await newDpopKey();
      const token = await issuer.token({ cnf: { jkt: key.jkt } });
      const sut = tokens();
      const spelt = ['http://127.0.0.1:3000/api/v1/me?x=1#frag', 'HTTP://127.0.0.1:3000/api/v1/me'];
      for (const htu of spelt) {
        const proof = await dpopProof(key, { method: 'GET', url: htu, accessToken: token });
        await expect(sut.verify(token, { scheme: 'dpop', proof, method: 'GET', url: 'http://127.0.0.1:3000/api/v1/me' })).resolves.toMatchObject({
          senderConstrained: true,
        });
      }
    });
  });

  describe('staff tokens, from the company’s provider', () => {
    const STAFF_AUDIENCE = 'urn:partner-gateway:staff';
    let company: TestIssuer;
    const withStaff = (rolesClaim = 'roles', idClaim = 'sub') =>
      new JoseAccessTokens(
        [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
        settings,
        new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
        new IssuerDirectory({ refetchCooldownMs: COOLDOWN_MS }),
        Date.now,
        { issuer: company.issuer, audience: STAFF_AUDIENCE, idClaim, rolesClaim },
      );
    const staffToken = (claims: Record<string, unknown> = {}) =>
      company.token({ aud: STAFF_AUDIENCE, sub: 'u-123', name: 'Sam Support', roles: ['support'], amr: ['pwd', 'otp'], scope: undefined, ...claims });

    beforeEach(async () => {
      company = await TestIssuer.start();
    });
    afterEach(() => company.close());

    it('when the company’s provider signed it for the staff audience, then it names the staff member, their groups and how they signed in', async () => {
      expect(await withStaff().verify(await staffToken({ acr: 'urn:mfa' }), bearer)).toEqual({
        kind: 'staff',
        issuer: company.issuer,
        subject: 'u-123',
        claims: { id: 'u-123', name: 'Sam Support', groups: ['support'], amr: ['pwd', 'otp'], acr: 'urn:mfa' },
        senderConstrained: false,
      });
    });

    it('when the roles are in a nested claim and the id in another claim, then those are read (Keycloak’s realm_access.roles, Entra ID’s oid)', async () => {
      const verified = await withStaff('realm_access.roles', 'oid').verify(
        await staffToken({ roles: undefined, realm_access: { roles: ['gw-support', 'offline'] }, oid: '8d0f-oid' }),
        bearer,
      );
      expect(verified).toMatchObject({ kind: 'staff', claims: { id: '8d0f-oid', groups: ['gw-support', 'offline'] } });
    });

    it('when a staff token has no display name, then the staff member goes by their id', async () => {
      expect(await withStaff().verify(await staffToken({ name: undefined }), bearer)).toMatchObject({ claims: { name: 'u-123' } });
    });

    const staffRefusals: [string, Record<string, unknown>][] = [
      ['for the end users’ audience', { aud: TEST_AUDIENCE }],
      ['with roles that are not strings', { roles: [{ role: 'support' }] }],
      ['with an amr that is not a list of strings', { amr: 'pwd otp' }],
      ['without the id claim', { sub: undefined }],
      ['with an id of lone surrogates', { sub: 'a\ud800b' }],
    ];
    it.each(staffRefusals)('when a staff token is %s, then it is refused as invalid_token', async (_, claims) => {
      await expect(withStaff().verify(await staffToken(claims), bearer)).rejects.toMatchObject({ code: 'AUTH.INVALID_TOKEN' });
    });

    it('when an end user’s issuer signs a token for the staff audience, then it is refused: each issuer names one kind of caller', async () => {
      await expect(withStaff().verify(await issuer.token({ aud: STAFF_AUDIENCE, roles: ['operator'], amr: ['mfa'] }), bearer)).rejects.toMatchObject({
        code: 'AUTH.INVALID_TOKEN',
      });
    });

    it('when a web app’s session would hold a staff token, then it is refused as an end user’s', async () => {
      await expect(withStaff().verifyEndUser(await staffToken(), { ...bearer, heldByService: true })).rejects.toMatchObject({ code: 'AUTH.INVALID_TOKEN' });
    });

    it('when the staff issuer is also an end users’ issuer, then the service does not start with it', () => {
      expect(
        () =>
          new JoseAccessTokens(
            [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
            settings,
            new DpopProofs(proofs, { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
            undefined,
            Date.now,
            {
              issuer: issuer.issuer,
              audience: STAFF_AUDIENCE,
              idClaim: 'sub',
              rolesClaim: 'roles',
            },
          ),
      ).toThrow(/also an end users' issuer/);
    });
  });
});
