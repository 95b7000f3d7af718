import { BlockList, isIP } from 'node:net';

/**
 * Where deliveries may go (docs/webhooks.md, "Where endpoints may point"). In production: https only,
 * to public addresses only, checked when an endpoint is saved and again as each attempt connects
 * (a name may resolve elsewhere later): never a private, loopback, link-local, shared or unspecified
 * address, which would let a partner have the service call into its own network (SSRF).
 */
export class DestinationPolicy {
  private readonly blocked = new BlockList();

  constructor(readonly allowLocal: boolean) {
    for (const [network, prefix] of [
      ['0.0.0.0', 8],
      ['10.0.0.0', 8],
      ['100.64.0.0', 10],
      ['127.0.0.0', 8],
      ['169.254.0.0', 16],
      ['172.16.0.0', 12],
      ['192.0.0.0', 24],
      ['192.168.0.0', 16],
      ['198.18.0.0', 15],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ] as const)
      this.blocked.addSubnet(network, prefix, 'ipv4');
    for (const [network, prefix] of [
      // IPv4-compatible addresses (::a.b.c.d), the unspecified and the loopback among them.
      ['::', 96],
      ['::1', 128],
      // IPv4 behind a translator (NAT64: RFC 6052, RFC 8215) or a 6to4 relay (RFC 3056): any IPv4 address, the private ones included.
      ['64:ff9b::', 96],
      ['64:ff9b:1::', 48],
      ['2002::', 16],
      ['fc00::', 7],
      ['fe80::', 10],
      ['ff00::', 8],
    ] as const)
      this.blocked.addSubnet(network, prefix, 'ipv6');
  }

  /** Why a URL is refused as an endpoint's, or undefined when it may be one. Its name's addresses are checked as it is called. */
  refusalOfUrl(text: string): string | undefined {
    // Control characters and spaces are no part of a URL as sent (the URL parser would quietly escape them).
    if ([...text].some((character) => character.charCodeAt(0) <= 0x20 || character.charCodeAt(0) === 0x7f))
      return 'it must not hold spaces or control characters';
    const url = URL.parse(text);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return 'it must be an absolute http(s) URL';
    if (url.username || url.password) return 'it must not hold credentials';
    if (this.allowLocal) return undefined;
    if (url.protocol !== 'https:') return 'it must be https';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && this.isRefusedAddress(host)) return 'it must not point to a private, loopback or link-local address';
    if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local'))
      return 'it must not point to a private, loopback or link-local address';
    return undefined;
  }

  /** Whether an address a delivery would connect to is refused. */
  isRefusedAddress(address: string): boolean {
    if (this.allowLocal) return false;
    const family = isIP(address);
    if (family === 4) return this.blocked.check(address, 'ipv4');
    if (family !== 6) return true;
    // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is that IPv4 address.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return this.blocked.check(mapped[1], 'ipv4');
    return this.blocked.check(address, 'ipv6');
  }
}
