import type { FastifyRequest } from 'fastify';

/** A host name (labels of letters, digits, `-` and `_`) or an IP literal, and an optional port: what an origin's host may be. */
const HOST_AND_PORT = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_][A-Za-z0-9_-]{0,62})*\.?)(?::(\d{1,5}))?$/;

export function isHostAndPort(value: string): boolean {
  const match = HOST_AND_PORT.exec(value);
  return match !== null && value.length <= 261 && (match[1] === undefined || Number(match[1]) <= 65_535);
}

/**
 * The origin the request was sent to, from its validated parts only: the scheme and host (behind
 * TRUST_PROXY, the ones the proxy forwarded); undefined when either is not an origin's part, or
 * when Host was sent more than once (which one the request meant is not known: the edge refuses it).
 */
export function requestOrigin(request: FastifyRequest): string | undefined {
  const { protocol, host } = request;
  if ((protocol !== 'http' && protocol !== 'https') || !isHostAndPort(host) || !hostSentOnce(request.raw.rawHeaders)) return undefined;
  return `${protocol}://${host.toLowerCase()}`;
}

/** Node keeps the first of two Host headers: whether there was only one. */
function hostSentOnce(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host' && ++seen > 1) return false;
  }
  return true;
}
