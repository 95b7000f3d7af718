import { randomUUID } from 'node:crypto';
import { RequestMethod } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import pino, { DestinationStream, Logger as PinoInstance } from 'pino';
import type { LogLevel } from '../../config/env.schema';
import { CanonicalTarget, isUnder, MAX_PATH_LENGTH, targetOf } from '../http/canonical-target';

/**
 * Belt and braces: the serializers below keep only a few request fields, and these paths are
 * censored wherever they appear, should anything log a whole request or header set.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.signature',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.signature',
  'authorization',
  'signature',
  'token',
  'password',
  '*.token',
  '*.password',
  '*.authorization',
  '*.signature',
  'res.headers["set-cookie"]',
];

const redact = { paths: REDACTED_PATHS, censor: '[REDACTED]' };

/** Query parameters whose names (never values) may be logged: the audit search's own. */
const LOGGED_PARAMETER_NAMES = new Set(['reference', 'error_id', 'customer_id', 'operation', 'outcome', 'client', 'from', 'to', 'limit', 'cursor']);

/**
 * A request's URL as logged: the canonical path, and of the query only the names of the API's own
 * parameters, every value redacted (a query can carry anything a caller typed: tokens, phone numbers).
 */
export function loggedUrl(target: Pick<CanonicalTarget, 'path' | 'query'>): string {
  const path = target.path.length > MAX_PATH_LENGTH ? `${target.path.slice(0, MAX_PATH_LENGTH)}…` : target.path;
  if (target.query === '') return path;
  const names = target.query.split('&').map((pair) => {
    const name = pair.split('=', 1)[0];
    return LOGGED_PARAMETER_NAMES.has(name) ? `${name}=[REDACTED]` : '[REDACTED]';
  });
  return `${path}?${names.join('&')}`;
}

/** `stream` replaces stdout, for tests that read what was logged. */
export function loggerParams(level: LogLevel, stream?: DestinationStream): Params {
  const options = {
    level,
    redact,
    genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id?: string }).id ?? randomUUID(),
    serializers: {
      req: (req: { id: string; method: string; remoteAddress?: string; raw?: IncomingMessage }) => ({
        id: req.id,
        method: req.method,
        url: req.raw ? loggedUrl(targetOf(req.raw)) : undefined,
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req: IncomingMessage, res: ServerResponse, error?: Error) =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    autoLogging: { ignore: (req: IncomingMessage) => isUnder('/health', targetOf(req).path) },
  };
  return {
    // Nest 12's Fastify adapter does not match nestjs-pino's default route pattern; name it.
    forRoutes: [{ path: '*path', method: RequestMethod.ALL }],
    pinoHttp: stream ? [options, stream] : options,
  };
}

/**
 * Where the running service's request log goes: stdout, written off the request path (lines that
 * arrive while a write is in progress go out together with the next one). `flushSync` before the
 * process exits writes whatever is still waiting.
 */
export function createRequestLogDestination(): DestinationStream & { flushSync(): void } {
  return pino.destination({ fd: 1, sync: false });
}

/** For what happens before Nest is up (embedded database, configuration) and for the CLIs. */
export function createBaseLogger(level: LogLevel, destination: 1 | 2 = 1): PinoInstance {
  return pino({ level, redact }, pino.destination({ fd: destination, sync: true }));
}
