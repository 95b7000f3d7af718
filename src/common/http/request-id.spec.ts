import { isSaneRequestId } from './request-id';

describe('isSaneRequestId', () => {
  it.each(['abc', 'a1b2-c3.d4:e5_f6', 'x'.repeat(128), '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10'])('accepts %s', (id) => {
    expect(isSaneRequestId(id)).toBe(true);
  });

  it.each(['', 'x'.repeat(129), 'with space', 'new\nline', '-leading-dash', 'quote"', 'ünïcode', undefined, 42, ['a']])('refuses %j', (id) => {
    expect(isSaneRequestId(id)).toBe(false);
  });
});
