import { constants, createHash, createPrivateKey, randomUUID, sign as cryptoSign } from 'node:crypto';
import fc from 'fast-check';
import { calculateJwkThumbprint, CompactSign, CryptoKey, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import { InMemoryProofReplay } from '../../../test/support/fakes';
import { DpopKey, dpopProof, newDpopKey, unsignedDpopProof } from '../../../test/support/oidc';
import { DpopProofs } from './dpop-proofs';

describe(DpopProofs.name, () => {
  const URL_ = 'http://127.0.0.1:3000/api/v1/me';
  const TOKEN = 'an-access-token';
  const TOKEN_HASH = createHash('sha256').update(TOKEN).digest('base64url');
  const sut = () => new DpopProofs(new InMemoryProofReplay(), { maxAgeSeconds: 60, clockSkewSeconds: 30 });

  /** An app's RSA key, its private half usable with either RSA algorithm a proof may name. */
  async function rsaKey(): Promise<{ key: DpopKey; signers: Record<'PS256' | 'RS256', CryptoKey> }> {
    const { privateKey, publicKey } = await generateKeyPair('PS256', { extractable: true, modulusLength: 2048 });
    const privateJwk = await exportJWK(privateKey);
    const publicJwk = await exportJWK(publicKey);
    const signers = {
      PS256: (await importJWK({ ...privateJwk, alg: 'PS256' }, 'PS256')) as CryptoKey,
      RS256: (await importJWK({ ...privateJwk, alg: 'RS256' }, 'RS256')) as CryptoKey,
    };
    return { key: { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') }, signers };
  }

  const check = (proofs: DpopProofs, key: DpopKey, proof: string, jkt = key.jkt) =>
    proofs.check({ proof, method: 'GET', url: URL_, accessTokenHash: TOKEN_HASH, jkt });

  it('when an app’s header is already known, then its next proof is still checked against the token’s key, its signature and its token', async () => {
    const key = await newDpopKey();
    const other = await newDpopKey();
    const proofs = sut();
    await check(proofs, key, await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN }));
    const next = await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN });
    const [h, p] = next.split('.');
    const forged = `${h}.${p}.${(await dpopProof(other, { method: 'GET', url: URL_, accessToken: TOKEN })).split('.')[2]}`;
    const otherToken = await dpopProof(key, { method: 'GET', url: URL_, accessToken: 'another-access-token' });

    await expect(check(proofs, key, next, other.jkt)).rejects.toMatchObject({ details: expect.stringMatching(/signed by another key/) });
    await expect(check(proofs, key, forged)).rejects.toMatchObject({ details: expect.stringMatching(/not a dpop\+jwt signed/) });
    await expect(check(proofs, key, otherToken)).rejects.toMatchObject({ details: expect.stringMatching(/another access token/) });
    await expect(check(proofs, key, next)).resolves.toBeUndefined();
  });

  /** The headers a checker remembers, by the key their tokens are bound to (its private cache, read for what it holds). */
  const rememberedOf = (proofs: DpopProofs) => {
    const headers = (proofs as unknown as { headers: { entries(): IterableIterator<[string, readonly { segment: string }[]]> } }).headers;
    return Object.fromEntries([...headers.entries()].map(([jkt, known]) => [jkt, known.map((header) => header.segment)]));
  };

  it('when proofs arrive, then only the header of a proof that passed every check is remembered, at most 2048 characters, at most two per key', async () => {
    const key = await newDpopKey();
    const proofs = sut();
    const request = { method: 'GET', url: URL_, accessToken: TOKEN };
    const good = await dpopProof(key, request);
    const [h, p, signature] = good.split('.');
    const flipped = `${h}.${p}.${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;

    await expect(check(proofs, key, flipped)).rejects.toMatchObject({ code: 'AUTH.INVALID_DPOP_PROOF' });
    // Signed, but for another method: its key is remembered, its header not.
    await expect(check(proofs, key, await dpopProof(key, { ...request, method: 'POST' }))).rejects.toMatchObject({
      details: expect.stringMatching(/another HTTP method/),
    });
    expect(rememberedOf(proofs)).toEqual({});
    await check(proofs, key, good);
    expect(rememberedOf(proofs)).toEqual({ [key.jkt]: [h] });
    await expect(check(proofs, key, good)).rejects.toMatchObject({ details: expect.stringMatching(/already used/) });
    await check(proofs, key, await dpopProof(key, request, { header: { kid: 'k'.repeat(1600) } }));
    expect(rememberedOf(proofs)[key.jkt]).toEqual([h]);
    const withKid = await dpopProof(key, request, { header: { kid: 'k'.repeat(1000) } });
    await check(proofs, key, withKid);
    expect(rememberedOf(proofs)[key.jkt]).toEqual([withKid.split('.')[0], h]);
    const third = await dpopProof(key, request, { header: { kid: 'third' } });
    await check(proofs, key, third);
    expect(rememberedOf(proofs)[key.jkt]).toEqual([third.split('.')[0], withKid.split('.')[0]]);
  });

  it('when a proof is refused as already used, even the first time this checker sees it, then its header is not remembered', async () => {
    const key = await newDpopKey();
    const replay = new InMemoryProofReplay();
    const elsewhere = new DpopProofs(replay, { maxAgeSeconds: 60, clockSkewSeconds: 30 });
    const here = new DpopProofs(replay, { maxAgeSeconds: 60, clockSkewSeconds: 30 });
    const proof = await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN });
    await check(elsewhere, key, proof);

    await expect(check(here, key, proof)).rejects.toMatchObject({ details: expect.stringMatching(/already used/) });

    expect(rememberedOf(here)).toEqual({});
    expect(rememberedOf(elsewhere)).toEqual({ [key.jkt]: [proof.split('.')[0]] });
  });

  it('when one app’s proofs vary their header, then another app’s header stays remembered', async () => {
    const app = await newDpopKey();
    const other = await newDpopKey();
    const proofs = sut();
    const request = { method: 'GET', url: URL_, accessToken: TOKEN };
    const first = await dpopProof(app, request);
    await check(proofs, app, first);

    for (let i = 0; i < 50; i++) await check(proofs, other, await dpopProof(other, request, { header: { kid: `${i}`.padStart(600, 'x') } }));

    expect(rememberedOf(proofs)[app.jkt]).toEqual([first.split('.')[0]]);
    expect(rememberedOf(proofs)[other.jkt]).toHaveLength(2);
  });

  it('finding 1: when one proof of an RSA key is signed with PS256 and the next with RS256, then both are accepted (a key imported for one alg is never used for another)', async () => {
    const { key, signers } = await rsaKey();
    const proofs = sut();

    await check(proofs, key, await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN }, { header: { alg: 'PS256' }, signWith: signers.PS256 }));
    const second = check(
      proofs,
      key,
      await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN }, { header: { alg: 'RS256' }, signWith: signers.RS256 }),
    );

    await expect(second).resolves.toBeUndefined();
  });

  it.each([
    ['RS256', 'RSA-PSS', constants.RSA_PKCS1_PSS_PADDING],
    ['PS256', 'PKCS #1 v1.5', constants.RSA_PKCS1_PADDING],
  ])('when a proof names %s but is signed with %s padding, then it is refused', async (alg, _, padding) => {
    const { key } = await rsaKey();
    const signer = createPrivateKey({ key: await exportJWK(key.privateKey), format: 'jwk' });
    const input = unsignedDpopProof({ alg, typ: 'dpop+jwt', jwk: key.publicJwk }, { method: 'GET', url: URL_, accessToken: TOKEN })
      .split('.')
      .slice(0, 2)
      .join('.');
    const proof = `${input}.${cryptoSign('sha256', Buffer.from(input), { key: signer, padding, saltLength: 32 }).toString('base64url')}`;

    await expect(check(sut(), key, proof)).rejects.toMatchObject({
      code: 'AUTH.INVALID_DPOP_PROOF',
      details: expect.stringMatching(/not a dpop\+jwt signed by/),
    });
  });

  it.each([
    ['an algorithm for key agreement (ECDH-ES)', 'ECDH-ES'],
    ['an algorithm for another curve (ES384 with a P-256 key)', 'ES384'],
    ['an algorithm for another key type (RS256 with an EC key)', 'RS256'],
    ['HMAC', 'HS256'],
    ['none', 'none'],
  ])('when a proof names %s, then it is refused for its alg', async (_, alg) => {
    const key = await newDpopKey();

    const forged = unsignedDpopProof({ alg, typ: 'dpop+jwt', jwk: key.publicJwk }, { method: 'GET', url: URL_, accessToken: TOKEN });

    await expect(check(sut(), key, forged)).rejects.toMatchObject({ code: 'AUTH.INVALID_DPOP_PROOF', details: expect.stringMatching(/alg must be one of/) });
  });

  it('finding 1: when the header’s key names another alg (jwk.alg ECDH-ES) than the proof, then the proof’s own alg decides and the valid proof is accepted', async () => {
    const key = await newDpopKey();

    const proof = await dpopProof(key, { method: 'GET', url: URL_, accessToken: TOKEN }, { header: { jwk: { ...key.publicJwk, alg: 'ECDH-ES' } } });

    await expect(check(sut(), key, proof)).resolves.toBeUndefined();
  });
});

/**
 * The proof is checked by jose's jwtVerify, with the service's own checks around it (the header's
 * key and its thumbprint, htm, htu, ath, iat's window): every proof below, well formed or not, must
 * get the answer jose's jwtVerify gives it with those checks alone (accepted or refused), so that
 * nothing the service adds refuses what jose accepts, or accepts what it refuses.
 */
describe(`${DpopProofs.name}, against jose`, () => {
  const URL_ = 'http://127.0.0.1:3000/api/v1/me';
  const TOKEN = 'an-access-token';
  const SKEW = 30;
  const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
  const ath = createHash('sha256').update(TOKEN).digest('base64url');
  const claims = (extra: Record<string, unknown> = {}) => ({ htm: 'GET', htu: URL_, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath, ...extra });

  /** jose's verdict, with the checks the service adds to it (the thumbprint, htm, htu, ath, iat's window). */
  async function joseAccepts(proof: string, key: DpopKey, alg: string): Promise<boolean> {
    try {
      const { payload } = await jwtVerify(proof, await importJWK(key.publicJwk, alg), {
        typ: 'dpop+jwt',
        algorithms: [alg],
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        clockTolerance: SKEW,
      });
      const now = Math.floor(Date.now() / 1000);
      const iat = payload.iat!;
      return (
        payload.htm === 'GET' && payload.htu === URL_ && payload.ath === ath && iat <= now + SKEW && iat >= now - 60 - SKEW && typeof payload.jti === 'string'
      );
    } catch {
      return false;
    }
  }

  const newProofs = () => new DpopProofs(new InMemoryProofReplay(), { maxAgeSeconds: 60, clockSkewSeconds: SKEW });

  /** The service's verdict, by a checker that has seen no proof before unless one is given (one that knows the app's header). */
  async function serviceAccepts(proof: string, key: DpopKey, proofs = newProofs()): Promise<boolean> {
    return proofs.check({ proof, method: 'GET', url: URL_, accessTokenHash: ath, jkt: key.jkt }).then(
      () => true,
      () => false,
    );
  }

  async function keyFor(
    alg: 'ES256' | 'ES384' | 'PS256' | 'RS256' | 'EdDSA',
  ): Promise<DpopKey & { sign: (header: object, payload: object) => Promise<string> }> {
    const { privateKey, publicKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg.startsWith('PS') || alg.startsWith('RS') ? { modulusLength: 2048 } : {}),
    });
    const publicJwk = await exportJWK(publicKey);
    // ES256 is signed by hand, so that a header jose would not sign (crit, b64) can be made too.
    const signer = createPrivateKey({ key: await exportJWK(privateKey), format: 'jwk' });
    const sign = async (header: object, payload: object) => {
      if (alg !== 'ES256') return new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader(header as { alg: string }).sign(privateKey);
      const input = `${encode(header)}.${encode(payload)}`;
      return `${input}.${cryptoSign('sha256', Buffer.from(input), { key: signer, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    };
    return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256'), sign };
  }

  const ALGORITHMS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA'] as const;

  it.each(ALGORITHMS)('when a well-formed %s proof is presented, then both accept it', async (alg) => {
    const key = await keyFor(alg);
    const proof = await key.sign({ alg, typ: 'dpop+jwt', jwk: key.publicJwk }, claims());

    expect({ service: await serviceAccepts(proof, key), jose: await joseAccepts(proof, key, alg) }).toEqual({ service: true, jose: true });
  });

  it('when the proof is changed in any of these ways, then the service answers as jose does', async () => {
    const key = await keyFor('ES256');
    const other = await keyFor('ES256');
    const header = { alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk };
    const good = await key.sign(header, claims());
    const [h, p, s] = good.split('.');
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      'typ in another case': await key.sign({ ...header, typ: 'DPoP+JWT' }, claims()),
      'typ with application/': await key.sign({ ...header, typ: 'application/dpop+jwt' }, claims()),
      'typ JWT': await key.sign({ ...header, typ: 'JWT' }, claims()),
      'no typ': await key.sign({ alg: 'ES256', jwk: key.publicJwk }, claims()),
      'a crit header': await key.sign({ ...header, crit: ['exp'] }, claims()),
      'an empty crit': await key.sign({ ...header, crit: [] }, claims()),
      'b64 false': await key.sign({ ...header, b64: false, crit: ['b64'] }, claims()),
      'signed by another key': await other.sign(header, claims()),
      'the signature cut short': `${h}.${p}.${s.slice(0, -4)}`,
      'the signature padded': `${good}=`,
      'no signature': `${h}.${p}.`,
      'a fourth segment': `${good}.${s}`,
      'a space in a segment': `${h}.${p} .${s}`,
      'a base64 character outside base64url': `${h}.${p.slice(0, -1)}+.${s}`,
      'the header not JSON': `${encode('{alg')}.${p}.${s}`,
      'the payload an array': await key.sign(header, [1, 2]),
      'the payload a string': await key.sign(header, 'hello' as unknown as object),
      'iat a string': await key.sign(header, claims({ iat: String(now) })),
      'iat null': await key.sign(header, claims({ iat: null })),
      'no jti': await key.sign(header, { ...claims(), jti: undefined }),
      'jti null': await key.sign(header, claims({ jti: null })),
      'exp passed': await key.sign(header, claims({ exp: now - 120 })),
      'exp to come': await key.sign(header, claims({ exp: now + 120 })),
      'exp a string': await key.sign(header, claims({ exp: 'soon' })),
      'nbf to come': await key.sign(header, claims({ nbf: now + 120 })),
      'nbf passed': await key.sign(header, claims({ nbf: now - 10 })),
      'iat too old': await key.sign(header, claims({ iat: now - 600 })),
      'iat in the future': await key.sign(header, claims({ iat: now + 600 })),
      'alg ES384 for a P-256 key': await key.sign({ ...header, alg: 'ES256' }, claims()).then((proof) => proof.replace(h, encode({ ...header, alg: 'ES384' }))),
      'the header changed after signing': good.replace(h, encode({ ...header, kid: 'x' })),
      'the payload changed after signing': good.replace(p, encode(claims())),
      'a duplicate member in the header': `${encode(`{"alg":"none","alg":"ES256","typ":"dpop+jwt","jwk":${JSON.stringify(key.publicJwk)}}`)}.${p}.${s}`,
    };
    const verdicts: Record<string, { service: boolean; jose: boolean }> = {};
    for (const [name, proof] of Object.entries(cases))
      verdicts[name] = { service: await serviceAccepts(proof, key), jose: await joseAccepts(proof, key, 'ES256') };
    // The same, by a checker that already knows the app's header from an earlier proof.
    const knowing = newProofs();
    expect(await serviceAccepts(await key.sign(header, claims()), key, knowing)).toBe(true);
    const knowingVerdicts: Record<string, boolean> = {};
    for (const [name, proof] of Object.entries(cases)) knowingVerdicts[name] = await serviceAccepts(proof, key, knowing);

    const disagreements = Object.entries(verdicts).filter(([, { service, jose }]) => service !== jose);
    expect(disagreements).toEqual([]);
    expect(knowingVerdicts).toEqual(Object.fromEntries(Object.entries(verdicts).map(([name, { jose }]) => [name, jose])));
    // The list holds both answers: a change that would make every verdict `false` fails here.
    expect(verdicts['typ with application/']).toEqual({ service: true, jose: true });
    expect(verdicts['signed by another key']).toEqual({ service: false, jose: false });
  });

  it('when any one character of a proof is changed, then the service answers as jose does', async () => {
    const key = await keyFor('ES256');
    const good = await key.sign({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk }, claims());
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';

    await fc.assert(
      fc.asyncProperty(fc.nat({ max: good.length - 1 }), fc.constantFrom(...alphabet), async (at, character) => {
        const changed = good.slice(0, at) + character + good.slice(at + 1);
        expect(await serviceAccepts(changed, key)).toBe(await joseAccepts(changed, key, 'ES256'));
      }),
      { numRuns: 300 },
    );
  });

  it('when the header is not UTF-8, then the service refuses the proof, as jose does', async () => {
    const key = await keyFor('ES256');
    const header = Buffer.concat([
      Buffer.from(`{"alg":"ES256","typ":"dpop+jwt","kid":"`),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`","jwk":${JSON.stringify(key.publicJwk)}}`),
    ]);
    const input = `${header.toString('base64url')}.${encode(claims())}`;
    const signer = createPrivateKey({ key: await exportJWK(key.privateKey), format: 'jwk' });
    const proof = `${input}.${cryptoSign('sha256', Buffer.from(input), { key: signer, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;

    expect({ service: await serviceAccepts(proof, key), jose: await joseAccepts(proof, key, 'ES256') }).toEqual({ service: false, jose: false });
  });
});
