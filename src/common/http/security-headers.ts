import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeStage } from './edge-stage';
import helmet, { HelmetOptions } from 'helmet';

/**
 * The headers helmet sets with these options, worked out once. None depends on the request (no
 * CSP nonces), so each response gets the same set in one call, instead of helmet building and
 * running its middleware chain for every request.
 */
export function securityHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string | number | readonly string[]) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  const run: { outcome: 'pending' | 'done' | Error } = { outcome: 'pending' };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    run.outcome = error ? new Error('helmet refused its options', { cause: error }) : 'done';
  });
  if (run.outcome instanceof Error) throw run.outcome;
  if (run.outcome !== 'done') throw new Error('helmet did not finish synchronously');
  return Object.freeze(headers);
}

/** Every response — answers, errors, 404s, the edge's refusals — carries the headers. */
export function securityHeadersStage(options: Readonly<HelmetOptions>): EdgeStage {
  const headers = securityHeaders(options);
  return {
    name: 'security-headers',
    onRequest: (_request, reply) => void reply.headers(headers),
  };
}
