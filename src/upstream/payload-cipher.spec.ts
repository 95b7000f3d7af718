import { createDecipheriv, generateKeyPairSync, KeyObject, privateDecrypt, constants } from 'node:crypto';
import { calculateJwkThumbprint, compactDecrypt, errors } from 'jose';
import { JwePayloadCipher, PlainPayloadCipher } from './payload-cipher';

/** Compact JWE (RSA-OAEP-256 + A256GCM) opened with node:crypto alone: no JOSE library involved. */
function decryptWithNodeCrypto(jwe: string, privateKey: KeyObject): { header: Record<string, unknown>; payload: unknown } {
  const [protectedHeader, encryptedKey, iv, ciphertext, tag] = jwe.split('.');
  const header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8')) as Record<string, unknown>;
  const cek = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(encryptedKey, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', cek, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  return { header, payload: JSON.parse(plaintext.toString('utf8')) };
}

describe('JwePayloadCipher', () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  /** The kid the provider expects: the key's RFC 7638 thumbprint, as jose computes it. */
  const expectedKid = () => calculateJwkThumbprint(publicKey.export({ format: 'jwk' }), 'sha256');
  const payload = { reference: '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11', first_name: 'Ada', amount: '10.00' };

  it('when a payload is sealed, then the body is {"data": compact JWE} with five parts', async () => {
    const sut = new JwePayloadCipher(publicKey);

    const body = await sut.seal(payload);

    expect(Object.keys(body)).toEqual(['data']);
    expect(String(body.data).split('.')).toHaveLength(5);
  });

  it('when node:crypto alone opens the JWE, then it finds the payload, RSA-OAEP-256/A256GCM and the RFC 7638 kid', async () => {
    const sut = new JwePayloadCipher(publicKey);

    const body = await sut.seal(payload);
    const opened = decryptWithNodeCrypto(String(body.data), privateKey);

    expect(opened.payload).toEqual(payload);
    expect(opened.header).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: await expectedKid() });
  });

  it('when jose opens the JWE, then it finds the payload and exactly the header the provider expects', async () => {
    const sut = new JwePayloadCipher(publicKey);
    const unusual = { ...payload, first_name: 'Zoë 𝔘 \ud800 "quoted" \u0000', nested: { list: [1, 'two', null] } };

    const body = await sut.seal(unusual);
    const opened = await compactDecrypt(String(body.data), privateKey, { keyManagementAlgorithms: ['RSA-OAEP-256'], contentEncryptionAlgorithms: ['A256GCM'] });

    expect(JSON.parse(Buffer.from(opened.plaintext).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(unusual)));
    expect(opened.protectedHeader).toEqual({
      alg: 'RSA-OAEP-256',
      enc: 'A256GCM',
      kid: await expectedKid(),
      cty: 'application/json',
    });
  });

  it('when any part of the JWE is changed by one character, then jose refuses it', async () => {
    const jwe = String((await new JwePayloadCipher(publicKey).seal(payload)).data);
    const parts = jwe.split('.');

    for (const index of [0, 1, 2, 3, 4]) {
      const changed = [...parts];
      // The first character: all six of its bits count, none is padding.
      changed[index] = (changed[index][0] === 'A' ? 'B' : 'A') + changed[index].slice(1);
      await expect(compactDecrypt(changed.join('.'), privateKey)).rejects.toThrow();
    }
    await expect(compactDecrypt(jwe, privateKey)).resolves.toBeDefined();
  });

  it('when the key is not an RSA key, then the cipher is refused at once', () => {
    const { publicKey: ecKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

    expect(() => new JwePayloadCipher(ecKey)).toThrow(/RSA/);
  });

  it('when the same payload is sealed twice, then each has its own content key and IV', async () => {
    const sut = new JwePayloadCipher(publicKey);

    const [a, b] = (await Promise.all([sut.seal(payload), sut.seal(payload)])).map((body) => String(body.data).split('.'));
    const contentKeyOf = (parts: string[]) =>
      privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(parts[1], 'base64url'));

    expect(a[2]).not.toBe(b[2]);
    expect(Buffer.from(a[2], 'base64url')).toHaveLength(12);
    expect(contentKeyOf(a).equals(contentKeyOf(b))).toBe(false);
    expect(contentKeyOf(a)).toHaveLength(32);
  });

  it('when the header is swapped for another that parses, the rest kept, then jose refuses it (the header is authenticated)', async () => {
    const sealed = String((await new JwePayloadCipher(publicKey).seal(payload)).data);
    const [, ...rest] = sealed.split('.');
    const otherHeader = Buffer.from(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'another', cty: 'application/json' })).toString('base64url');

    // As sealed it opens: the refusal below is the swap's, not the seal's.
    expect(JSON.parse(Buffer.from((await compactDecrypt(sealed, privateKey)).plaintext).toString('utf8'))).toEqual(payload);
    await expect(compactDecrypt([otherHeader, ...rest].join('.'), privateKey)).rejects.toThrow(errors.JWEDecryptionFailed);
  });

  it('when the payload cannot be made JSON, then seal rejects rather than throws', async () => {
    const sealing = new JwePayloadCipher(publicKey).seal({ amount: 10n });

    await expect(sealing).rejects.toThrow(TypeError);
  });

  it('when the key has fewer than 2048 bits, then the cipher is refused at once', () => {
    const { publicKey: small } = generateKeyPairSync('rsa', { modulusLength: 1024 });

    expect(() => new JwePayloadCipher(small)).toThrow(/2048/);
  });

  it('when another key opens the JWE, then it fails', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const body = await new JwePayloadCipher(publicKey).seal(payload);

    expect(() => decryptWithNodeCrypto(String(body.data), other)).toThrow();
  });
});

describe('PlainPayloadCipher', () => {
  it('when a payload is sealed, then it is sent as it is', async () => {
    await expect(new PlainPayloadCipher().seal({ reference: 'r', a: 1 })).resolves.toEqual({ reference: 'r', a: 1 });
  });
});
