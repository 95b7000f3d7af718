import { generateClientToken, hashClientToken, sameHash, TOKEN_PREFIX } from './client-token';

describe('client tokens', () => {
  it('when generated, then each has the prefix and at least 256 bits of randomness', () => {
    const tokens = Array.from({ length: 200 }, () => generateClientToken());

    for (const token of tokens) {
      expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
      expect(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').length).toBeGreaterThanOrEqual(32);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('when hashed, then the result is the SHA-256 hex of the token', () => {
    // FIPS 180-2 test vector
    expect(hashClientToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('when two hashes are compared, then only identical ones match', () => {
    const hash = hashClientToken('one');

    expect(sameHash(hash, hashClientToken('one'))).toBe(true);
    expect(sameHash(hash, hashClientToken('two'))).toBe(false);
    expect(sameHash(hash, hash.slice(0, 32))).toBe(false);
    expect(sameHash('', '')).toBe(false);
  });
});
