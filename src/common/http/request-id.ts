import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Printable, short, no separators a log or header parser could trip on. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && SANE_REQUEST_ID.test(value);
}

/**
 * Fastify's request-id generator: the caller's X-Request-Id when it is sane, else a fresh UUID.
 * The id is also put on the raw request so the HTTP logger reuses it.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = isSaneRequestId(given) ? given : randomUUID();
  (req as IncomingMessage & { id?: string }).id = id;
  return id;
}
