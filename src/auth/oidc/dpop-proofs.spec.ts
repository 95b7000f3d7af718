import { calculateJwkThumbprint, CryptoKey, exportJWK, generateKeyPair, importJWK } from 'jose';
import { InMemoryProofReplay } from '../../../test/support/fakes';
import { DpopKey, dpopProof, newDpopKey, unsignedDpopProof } from '../../../test/support/oidc';
import { DpopProofs, thumbprintOf } from './dpop-proofs';

describe(thumbprintOf.name, () => {
  it.each(['ES256', 'ES384', 'PS256', 'EdDSA'])('when the key is %s, then the thumbprint is the one jose computes (RFC 7638)', async (alg) => {
    const { publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = await exportJWK(publicKey);

    expect(thumbprintOf({ ...jwk, kid: 'ignored', use: 'sig' })).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it.each([
    ['a symmetric key', { kty: 'oct', k: 'c2VjcmV0' }],
    ['an unknown key type', { kty: 'XYZ', x: 'a' }],
    ['a member that is not a string', { kty: 'EC', crv: 'P-256', x: 1, y: 'a' }],
    ['a missing member', { kty: 'EC', crv: 'P-256', x: 'a' }],
  ])('when the header carries %s, then there is no thumbprint', (_, jwk) => {
    expect(thumbprintOf(jwk as never)).toBeUndefined();
  });
});

describe(DpopProofs.name, () => {
  const URL_ = 'http://127.0.0.1:3000/api/v1/me';
  const TOKEN = 'an-access-token';
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

  const check = (proofs: DpopProofs, key: DpopKey, proof: string) => proofs.check({ proof, method: 'GET', url: URL_, accessToken: TOKEN, jkt: key.jkt });

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
