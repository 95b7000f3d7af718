import { createHash } from 'node:crypto';

/**
 * A second implementation of RFC 9162's Merkle trees, for the tests only: its definitions (section
 * 2.1) as written, over the leaves' data, by slicing lists. Nothing of the service's or the typed
 * client's code is used in it.
 */
export const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const largestPowerBelow = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);

/** MTH(D[n]). */
export function MTH(d: Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Buffer.from([0]), d[0]);
  const k = largestPowerBelow(d.length);
  return sha(Buffer.from([1]), MTH(d.slice(0, k)), MTH(d.slice(k)));
}

/** PATH(m, D[n]): the inclusion proof of leaf m. */
export function PATH(m: number, d: Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = largestPowerBelow(d.length);
  return m < k ? [...PATH(m, d.slice(0, k)), MTH(d.slice(k))] : [...PATH(m - k, d.slice(k)), MTH(d.slice(0, k))];
}

/** SUBPROOF(m, D[n], b); PROOF(m, D[n]) is SUBPROOF(m, D[n], true). */
export function SUBPROOF(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [MTH(d)];
  const k = largestPowerBelow(d.length);
  return m <= k ? [...SUBPROOF(m, d.slice(0, k), b), MTH(d.slice(k))] : [...SUBPROOF(m - k, d.slice(k), false), MTH(d.slice(0, k))];
}
