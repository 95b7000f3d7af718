import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { thumbprintOf } from './jwk-thumbprint';

describe(thumbprintOf.name, () => {
  it.each(['ES256', 'ES384', 'PS256', 'RSA-OAEP-256', 'EdDSA'])('when the key is %s, then the thumbprint is the one jose computes (RFC 7638)', async (alg) => {
    const { publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = await exportJWK(publicKey);

    expect(thumbprintOf({ ...jwk, kid: 'ignored', use: 'sig' })).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it.each([
    ['a symmetric key', { kty: 'oct', k: 'c2VjcmV0' }],
    ['an unknown key type', { kty: 'XYZ', x: 'a' }],
    ['a member that is not a string', { kty: 'EC', crv: 'P-256', x: 1, y: 'a' }],
    ['a missing member', { kty: 'EC', crv: 'P-256', x: 'a' }],
  ])('when the JWK is %s, then there is no thumbprint', (_, jwk) => {
    expect(thumbprintOf(jwk as never)).toBeUndefined();
  });
});
