import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { thumbprintOf } from './jwk-thumbprint';

describe(thumbprintOf.name, () => {
  it.each(['ES256', 'ES384', 'PS256', 'EdDSA'])('when the key is %s, then the thumbprint is the one jose computes (RFC 7638)', async (alg) => {
    const { publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = await exportJWK(publicKey);

    expect(thumbprintOf({ ...jwk, kid: 'ignored', use: 'sig' })).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it.each([
    ['is a symmetric key', { kty: 'oct', k: 'c2VjcmV0' }],
    ['has an unknown key type', { kty: 'XYZ', x: 'a' }],
    ['has a member that is not a string', { kty: 'EC', crv: 'P-256', x: 1, y: 'a' }],
    ['lacks a member', { kty: 'EC', crv: 'P-256', x: 'a' }],
  ])('when the JWK %s, then there is no thumbprint', (_, jwk) => {
    expect(thumbprintOf(jwk as never)).toBeUndefined();
  });
});
