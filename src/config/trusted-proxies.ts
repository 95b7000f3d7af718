import { isIP } from 'node:net';

/**
 * TRUST_PROXY, read: which proxies in front of the service are believed about a request's origin
 * (X-Forwarded-For, -Host, -Proto). Each proxy appends the address it received the request from to
 * X-Forwarded-For; the entries the trusted proxies appended are facts, every entry to their left is
 * what the caller wrote. The request's address is the rightmost entry no trusted proxy vouches for.
 */
export type TrustedProxies =
  | { readonly kind: 'none' }
  /** The nearest `hops` proxies, whoever connects: only where nothing but the proxy can reach the service. */
  | { readonly kind: 'hops'; readonly hops: number }
  /** Proxies at these addresses or in these ranges (CIDR), at any distance. */
  | { readonly kind: 'addresses'; readonly addresses: readonly string[] }
  /** Every hop (outside production only): the leftmost X-Forwarded-For entry, which the caller writes, is its address. */
  | { readonly kind: 'every-hop' };

/** What Fastify's `trustProxy` option takes. */
export type TrustProxyOption = boolean | string[] | ((address: string, hop: number) => boolean);

const MAX_HOPS = 10;

const USAGE = "must be the proxies' addresses or CIDR ranges, comma-separated (10.0.0.0/8), their number (1), or false";

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * Reads TRUST_PROXY: `false`/`0` (none), a number of hops, or addresses and CIDR ranges,
 * comma-separated. `true` trusts every hop, so that a caller chooses its own address: refused when
 * NODE_ENV is production. Throws with the reason, never the value.
 */
export function readTrustedProxies(value: string, env: { readonly NODE_ENV?: unknown } = {}): TrustedProxies {
  const text = value.trim().toLowerCase();
  if (['false', 'no', 'off'].includes(text)) return { kind: 'none' };
  if (['true', 'yes', 'on'].includes(text)) {
    if (env.NODE_ENV === 'production') {
      throw new Error(
        "must not be true in production: it trusts every hop, so a caller chooses its own address with X-Forwarded-For. Give the proxies' addresses or CIDR ranges (10.0.0.0/8) or their number (1)",
      );
    }
    return { kind: 'every-hop' };
  }
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > MAX_HOPS) throw new Error(`must be at most ${MAX_HOPS} hops`);
    return hops === 0 ? { kind: 'none' } : { kind: 'hops', hops };
  }
  const addresses = text.split(',').map((entry) => entry.trim());
  if (!addresses.every(isAddressOrRange)) throw new Error(USAGE);
  return { kind: 'addresses', addresses };
}

/** Fastify's `trustProxy` for these proxies (Fastify itself refuses a bare hop count: it trusts no one for it). */
export function trustProxyOption(proxies: TrustedProxies): TrustProxyOption {
  switch (proxies.kind) {
    case 'none':
      return false;
    case 'every-hop':
      return true;
    case 'addresses':
      return [...proxies.addresses];
    case 'hops': {
      const { hops } = proxies;
      // Hop 0 is the connection's peer, hop 1 the address it forwarded for, and so on.
      return (_address, hop) => hop < hops;
    }
  }
}
