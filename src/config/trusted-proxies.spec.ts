import { readTrustedProxies, trustProxyOption } from './trusted-proxies';

describe(readTrustedProxies.name, () => {
  it.each([
    ['false', { kind: 'none' }],
    ['0', { kind: 'none' }],
    ['1', { kind: 'hops', hops: 1 }],
    [' 2 ', { kind: 'hops', hops: 2 }],
    ['10.0.0.0/8', { kind: 'addresses', addresses: ['10.0.0.0/8'] }],
    ['10.244.0.0/16, 192.0.2.7,fd00::/8', { kind: 'addresses', addresses: ['10.244.0.0/16', '192.0.2.7', 'fd00::/8'] }],
  ])('when TRUST_PROXY is %j, then it is read as %j', (value, expected) => {
    expect(readTrustedProxies(value, { NODE_ENV: 'production' })).toEqual(expected);
  });

  it('finding 2: when TRUST_PROXY is true in production, then it is refused with the reason, since every hop would let a caller choose its address', () => {
    for (const value of ['true', 'TRUE', 'yes', 'on']) {
      expect(() => readTrustedProxies(value, { NODE_ENV: 'production' })).toThrow(/must not be true in production/);
    }
  });

  it('when TRUST_PROXY is true outside production, then it trusts every hop', () => {
    expect(readTrustedProxies('true', { NODE_ENV: 'development' })).toEqual({ kind: 'every-hop' });
    expect(readTrustedProxies('true', { NODE_ENV: 'test' })).toEqual({ kind: 'every-hop' });
  });

  it.each(['11', '-1', '1.5', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', 'proxy.internal', '10.0.0.0/8,', 'loopback', '10.0.0.0/ 8'])(
    'when TRUST_PROXY is %j, then it is refused without echoing it',
    (value) => {
      expect(() => readTrustedProxies(value)).toThrow(Error);
      try {
        readTrustedProxies(value);
      } catch (error) {
        expect((error as Error).message).not.toContain(value);
      }
    },
  );
});

describe(trustProxyOption.name, () => {
  it('when a number of hops is trusted, then Fastify trusts exactly that many addresses from the connection outward, whoever they are', () => {
    const sut = trustProxyOption({ kind: 'hops', hops: 1 });

    expect(typeof sut).toBe('function');
    const trust = sut as (address: string, hop: number) => boolean;
    expect([trust('127.0.0.1', 0), trust('10.0.0.9', 1), trust('6.6.6.6', 2)]).toEqual([true, false, false]);
  });

  it('when addresses are trusted, then Fastify gets them as its list; none is false, every hop true', () => {
    expect(trustProxyOption({ kind: 'addresses', addresses: ['10.0.0.0/8', '192.0.2.7'] })).toEqual(['10.0.0.0/8', '192.0.2.7']);
    expect(trustProxyOption({ kind: 'none' })).toBe(false);
    expect(trustProxyOption({ kind: 'every-hop' })).toBe(true);
  });
});
