import { DestinationPolicy } from './destination-policy';

describe('DestinationPolicy (where deliveries may go)', () => {
  const production = new DestinationPolicy(false);
  const development = new DestinationPolicy(true);

  it.each([
    ['http://partner.example/hook', 'it must be https'],
    ['https://127.0.0.1/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://10.1.2.3/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://172.20.0.1/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://192.168.1.1/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://169.254.169.254/latest/meta-data', 'it must not point to a private, loopback or link-local address'],
    ['https://100.64.0.1/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://0.0.0.0/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[::1]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[fd00::1]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[fe80::1]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[::ffff:10.0.0.1]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[64:ff9b::a9fe:a9fe]/latest', 'it must not point to a private, loopback or link-local address'],
    ['https://[::a00:1]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://[2002:a00:1::]/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://partner.example/ho ok', 'it must not hold spaces or control characters'],
    ['https://partner.example/\u0000', 'it must not hold spaces or control characters'],
    ['https://localhost/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://metadata.google.internal/hook', 'it must not point to a private, loopback or link-local address'],
    ['https://user:pass@partner.example/hook', 'it must not hold credentials'],
    ['ftp://partner.example/hook', 'it must be an absolute http(s) URL'],
    ['/relative', 'it must be an absolute http(s) URL'],
  ])('when production is asked for %s, then it is refused: %s', (url, reason) => {
    expect(production.refusalOfUrl(url)).toBe(reason);
  });

  it('when production is asked for a public https URL, or an address that is public, then it is allowed', () => {
    expect(production.refusalOfUrl('https://partner.example/webhooks?x=1')).toBeUndefined();
    expect(production.refusalOfUrl('https://93.184.215.14/hook')).toBeUndefined();
    expect(production.isRefusedAddress('93.184.215.14')).toBe(false);
    expect(production.isRefusedAddress('2606:2800:21f:cb07:6820:80da:af6b:8b2c')).toBe(false);
  });

  it('when an address a name resolved to is checked, then loopback, private and link-local ones are refused, written either way', () => {
    for (const address of ['127.0.0.1', '10.0.0.7', '::1', '::ffff:127.0.0.1', 'fe80::1', 'not an address']) {
      expect(production.isRefusedAddress(address)).toBe(true);
    }
  });

  it('when local URLs are allowed (development), then http and loopback pass, and credentials still do not', () => {
    expect(development.refusalOfUrl('http://127.0.0.1:4242/hook')).toBeUndefined();
    expect(development.isRefusedAddress('127.0.0.1')).toBe(false);
    expect(development.refusalOfUrl('http://u:p@127.0.0.1/hook')).toBe('it must not hold credentials');
  });
});
