import { createHmac, randomBytes } from 'node:crypto';
import { Pseudonyms } from './pseudonyms';

describe('Pseudonyms', () => {
  const key = randomBytes(32);
  const pseudonyms = new Pseudonyms(key);

  it('when an end user is named, then their id is the HMAC-SHA256 of their issuer and subject under the key, as a version 8 UUID, the same on every call', () => {
    const mac = createHmac('sha256', key)
      .update(JSON.stringify(['https://id.example', 'user-1']), 'utf8')
      .digest('hex');

    const id = pseudonyms.of('https://id.example', 'user-1');

    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The hash's first 128 bits, but for the version and variant bits.
    const hex = id.replaceAll('-', '');
    expect(hex.slice(0, 12)).toBe(mac.slice(0, 12));
    expect(hex.slice(13, 16)).toBe(mac.slice(13, 16));
    expect(hex.slice(18)).toBe(mac.slice(18, 32));
    expect(pseudonyms.of('https://id.example', 'user-1')).toBe(id);
  });

  it('when the issuer, the subject or the key differ, or the two run into each other, then the ids differ', () => {
    const id = pseudonyms.of('https://id.example', 'user-1');

    expect(pseudonyms.of('https://id.example', 'user-2')).not.toBe(id);
    expect(pseudonyms.of('https://other.example', 'user-1')).not.toBe(id);
    expect(pseudonyms.of('https://id.exampleuser-1', '')).not.toBe(pseudonyms.of('https://id.example', 'user-1'));
    expect(new Pseudonyms(randomBytes(32)).of('https://id.example', 'user-1')).not.toBe(id);
  });

  it('when more end users are named than are remembered, then each still gets the id its HMAC gives, the first ones too', () => {
    const many = new Pseudonyms(key);
    const subjects = Array.from({ length: 10_050 }, (_, i) => `user-${i}`);
    const first = subjects.map((subject) => many.of('https://id.example', subject));

    const again = subjects.map((subject) => many.of('https://id.example', subject));

    expect(again).toEqual(first);
    expect(new Set(first).size).toBe(subjects.length);
    expect(first[0]).toBe(pseudonyms.of('https://id.example', 'user-0'));
    expect(first[10_049]).toBe(new Pseudonyms(key).of('https://id.example', 'user-10049'));
  });
});
