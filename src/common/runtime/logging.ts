import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import type { LoggerService } from '@nestjs/common';
import type { prettyFactory as PrettyFactory } from 'pino-pretty';
import type { FastifyRequest } from 'fastify';
import pino, { DestinationStream, Logger as PinoInstance } from 'pino';
import type { EdgeStage } from '../http/edge-stage';
import { contextOf } from '../http/request-context';
import type { LogLevel } from '../../config/environment/raw-environment';
import { CanonicalTarget, isUnder, MAX_PATH_LENGTH } from '../http/canonical-target';

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

/**
 * The service's logger once Nest is up: the application's own lines (through ServiceLogger) and
 * one line per request (requestLogStage), with the redaction above. `stream` is where it writes:
 * createRequestLogDestination() in production, a capture in tests.
 */
export function createServiceLogger(level: LogLevel, stream: DestinationStream): PinoInstance {
  return pino({ level, redact }, stream);
}

/**
 * The request lines' logger, on the same stream: without redaction, because requestLogStage
 * builds each line from named fields only (no header, no body, the query's values redacted by
 * loggedUrl), and walking the redaction paths for every request cost 2–3% of the gateway's CPU.
 */
export function createRequestLogger(level: LogLevel, stream: DestinationStream): PinoInstance {
  return pino({ level }, stream);
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's start-up chatter (one line per module and per route, about 40 in all): debug, so that at
 * info the start-up says what matters — the database, the mode, the tokens, the address.
 */
const FRAMEWORK_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * Nest's LoggerService over pino. `new Logger('context').warn({ fields }, 'message')` becomes one
 * line `{ context, ...fields, msg }`; an Error as the first argument is logged under `err`, with
 * its stack. A line about a request carries `req.id`, so that support can find every line of a
 * request by its X-Request-Id, and `trace_id` when its trace is sampled: the request's own log line
 * and the error filter's write them, and code that logs about a request passes its record's
 * (`logContextOf`); nothing is looked up behind the caller's back.
 */
export class ServiceLogger implements LoggerService {
  constructor(private readonly pino: PinoInstance) {}

  verbose(message: unknown, ...optional: unknown[]): void {
    this.call('trace', message, optional);
  }
  debug(message: unknown, ...optional: unknown[]): void {
    this.call('debug', message, optional);
  }
  log(message: unknown, ...optional: unknown[]): void {
    this.call(FRAMEWORK_CONTEXTS.has(optional[optional.length - 1] as string) ? 'debug' : 'info', message, optional);
  }
  warn(message: unknown, ...optional: unknown[]): void {
    this.call('warn', message, optional);
  }
  error(message: unknown, ...optional: unknown[]): void {
    this.call('error', message, optional);
  }
  fatal(message: unknown, ...optional: unknown[]): void {
    this.call('fatal', message, optional);
  }

  private call(level: Level, message: unknown, optional: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    // Nest passes the logger's context last.
    const params = optional.length > 0 ? optional.slice(0, -1) : [];
    if (optional.length > 0) fields.context = optional[optional.length - 1];
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, ...(params as [string?]));
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level](Object.assign(fields, message), ...(params as [string?]));
    } else if (level === 'error' && params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0])) {
      // Nest's own exception handlers pass (message, stack).
      const err = new Error(String(message));
      err.stack = params[0];
      fields.err = err;
      this.pino[level](fields);
    } else {
      this.pino[level](fields, String(message), ...params);
    }
  }
}

/** What a request's log line says: 499 for a caller that hung up before its answer. */
const CLIENT_CLOSED = 499;

/**
 * One line per request, written when its answer has gone (or its caller has): method, the logged
 * URL (see loggedUrl), status and time taken, at info (2xx, 3xx, a caller that hung up), warn (4xx)
 * or error (5xx). Health probes are not logged. An edge stage: no middleware, no child logger per
 * request.
 */
export function requestLogStage(logger: PinoInstance): EdgeStage {
  const write = (request: FastifyRequest, status: number, elapsedMs: number): void => {
    const context = contextOf(request.raw);
    if (context.logged) return;
    context.logged = true;
    const target = context.target;
    if (isUnder('/health', target.path)) return;
    const level = status >= 500 ? 'error' : status >= 400 && status !== CLIENT_CLOSED ? 'warn' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const line = {
      req: { id: request.id, method: request.method, url: loggedUrl(target), remoteAddress: request.socket?.remoteAddress },
      res: { statusCode: status },
      responseTime: Math.round(elapsedMs),
      ...(context.record.traceId ? { trace_id: context.record.traceId } : {}),
    };
    logger[level](line, status === CLIENT_CLOSED ? 'request aborted by the client' : status >= 500 ? 'request errored' : 'request completed');
  };
  return {
    name: 'request-log',
    onResponse: (request, reply) => write(request, reply.statusCode, reply.elapsedTime),
    onAbort: (request) => write(request, CLIENT_CLOSED, performance.now() - contextOf(request.raw).record.startedAt),
  };
}

/**
 * Lines for a person at a terminal (pino-pretty): one per line, coloured, with the time, level,
 * context and message, fields after. Written at once, so nothing waits to be flushed.
 */
/** The human-readable form of a log line at a terminal: one line each, coloured, its fields as JSON at the end. */
export const HUMAN_READABLE = {
  colorize: true,
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,context',
  messageFormat: '{if context}[{context}] {end}{msg}',
} as const;

function prettyDestination(fd: 1 | 2, prettyFactory: typeof PrettyFactory): DestinationStream & { flushSync(): void } {
  const prettify = prettyFactory(HUMAN_READABLE);
  return {
    write: (line: string) => void writeSync(fd, prettify(line)),
    flushSync: () => undefined,
  };
}

/**
 * pino-pretty, a development dependency: the production image (npm ci --omit=dev) has none, and
 * writes JSON lines at a terminal too (`kubectl exec`, `docker exec -it`).
 */
function installedPrettyFactory(): typeof PrettyFactory | undefined {
  try {
    return (createRequire(__filename)('pino-pretty') as { prettyFactory: typeof PrettyFactory }).prettyFactory;
  } catch {
    return undefined;
  }
}

/** JSON lines for machines, unless a person reads this descriptor at a terminal (and pino-pretty is installed). */
function prettyAt(fd: 1 | 2): typeof PrettyFactory | undefined {
  return (fd === 1 ? process.stdout : process.stderr).isTTY === true ? installedPrettyFactory() : undefined;
}

/** Lines wait until this much is buffered (below sonic-boom's largest write, 16 KiB), or until the next flush. */
const LOG_BUFFER_BYTES = 8 * 1024;
/** How long a line waits at most before it is written. */
export const LOG_FLUSH_MS = 100;

/**
 * Where the running service's log goes: stdout as JSON lines, buffered and written off the request
 * path — one write per 8 KiB of lines under load, and every 100 ms whatever is waiting — or, when
 * stdout is a terminal, human-readable lines at once. `flushSync` before the process exits writes
 * whatever is waiting.
 */
export function createRequestLogDestination(): RequestLogDestination {
  const pretty = prettyAt(1);
  if (pretty) return { ...prettyDestination(1, pretty), drain: () => Promise.resolve() };
  const destination = pino.destination({ fd: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  // sonic-boom's own state (not in its types): a destroyed destination throws on flush.
  const destroyed = () => (destination as unknown as { destroyed?: boolean }).destroyed === true;
  const flushing = setInterval(() => {
    if (!destroyed()) destination.flush();
  }, LOG_FLUSH_MS).unref();
  return {
    write: (line: string) => destination.write(line),
    flushSync: () => {
      clearInterval(flushing);
      if (!destroyed()) destination.flushSync();
    },
    drain: () => new Promise<void>((resolve) => (destroyed() ? resolve() : destination.flush(() => resolve()))),
  };
}

/** The service's log: `drain` writes what waits and resolves once written; `flushSync`, at exit, writes it at once. */
export type RequestLogDestination = DestinationStream & { flushSync(): void; drain(): Promise<void> };

/** For what happens before Nest is up (embedded database, configuration) and for the CLIs. */
export function createBaseLogger(level: LogLevel, destination: 1 | 2 = 1): PinoInstance {
  const pretty = prettyAt(destination);
  return pino({ level, redact }, pretty ? prettyDestination(destination, pretty) : pino.destination({ fd: destination, sync: true }));
}
