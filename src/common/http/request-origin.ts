import type { FastifyRequest } from 'fastify';

/** A host name (labels of letters, digits, `-` and `_`) or an IP literal, and an optional port: what an origin's host may be. */
const HOST_AND_PORT = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_][A-Za-z0-9_-]{0,62})*\.?)(?::(\d{1,5}))?$/;

export function isHostAndPort(value: string): boolean {
  const match = HOST_AND_PORT.exec(value);
  return match !== null && value.length <= 261 && (match[1] === undefined || Number(match[1]) <= 65_535);
}

/**
 * The origin the request was sent to, from its validated parts only: the scheme and host (behind
 * TRUST_PROXY, the ones the proxy forwarded); undefined when either is not an origin's part.
 */
export function requestOrigin(request: FastifyRequest): string | undefined {
  const { protocol, host } = request;
  if ((protocol !== 'http' && protocol !== 'https') || !isHostAndPort(host)) return undefined;
  return `${protocol}://${host.toLowerCase()}`;
}

/**
 * The origin to link a refused request's documentation on: the one it was sent to, unless its
 * headers were what was refused (a Host sent twice, say): then none (PUBLIC_BASE_URL or
 * ERROR_DOCS_URL still give one; the connection's own address would name a pod, not the gateway).
 */
export function linkOrigin(request: FastifyRequest, code: string): string | undefined {
  return code === 'REQUEST.MALFORMED' ? undefined : requestOrigin(request);
}
