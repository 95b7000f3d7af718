import { RequestSigner } from './request-signer';

// Vectors computed outside this code base: printf '%s' "<key><reference>" | sha256sum
describe('RequestSigner', () => {
  it.each([
    ['PUBKEY123', '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10', '4421b3b4f32018ab02daed1ba5957ed701a428b60b8795350dad386259379cff'],
    [
      '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----',
      '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11',
      '8c6f9d74695cd480b5240d6fb463611535bb7b557766bc59874b42632d7fcdea',
    ],
    ['clé-ü', 'ref-1', '0e24786d6d857e5310924f13077e1796fe4e79e8237c6fc551db28694f273e48'],
  ])('when the key is %j and the reference %j, then the signature is the known vector', (key, reference, expected) => {
    const sut = new RequestSigner(key);

    expect(sut.sign(reference)).toBe(expected);
  });

  it('when the configured key has surrounding whitespace, then it is trimmed before hashing', () => {
    const sut = new RequestSigner('\n  PUBKEY123 \n');

    expect(sut.sign('3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10')).toBe('4421b3b4f32018ab02daed1ba5957ed701a428b60b8795350dad386259379cff');
  });

  it('when signing, then the result is lowercase hex of 64 characters', () => {
    expect(new RequestSigner('k').sign('r')).toMatch(/^[0-9a-f]{64}$/);
  });
});
