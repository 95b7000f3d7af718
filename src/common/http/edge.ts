import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { problemOf, errorEnvelope } from './error-envelope.filter';
import { REQUEST_ID_HEADER } from './request-id';
import { targetOf } from './canonical-target';
import { ClientClosedRequest, MalformedRequest, RequestHeadersTooLarge, RequestTargetRefused, RequestTimedOut, UnsupportedContentEncoding } from './edge.errors';
import { noteInterruption } from './interruption';
import { useJsonBodyParser } from './json-body';

export interface EdgeTimeouts {
  /** Headers and body must have arrived whole by then. */
  readonly requestTimeoutMs: number;
  /** Headers must have arrived by then (at most requestTimeoutMs). */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
}

/** The request each connection is serving, so that a timeout can be told to it. */
const serving = new WeakMap<Socket, { readonly request: FastifyRequest; readonly reply: FastifyReply }>();

function errorForClient(error: NodeJS.ErrnoException, timeouts: EdgeTimeouts): DomainError {
  // The connection ended in the middle of a request: the caller hung up.
  if (error.code === 'HPE_INVALID_EOF_STATE') return new ClientClosedRequest();
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimedOut(timeouts.requestTimeoutMs);
  if (error.code === 'HPE_HEADER_OVERFLOW') return new RequestHeadersTooLarge();
  return new MalformedRequest();
}

/** Writes an error envelope straight onto a connection whose request Node could not hand over. */
function writeRawEnvelope(socket: Socket, error: DomainError, errorId: string, requestId: string): void {
  const problem = problemOf(error);
  const body = JSON.stringify(errorEnvelope(problem, errorId));
  const reason = STATUS_CODES[problem.status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${problem.status} ${reason}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

/**
 * Node's own refusals (malformed HTTP, headers too large, a request that did not arrive in time):
 * the envelope with an error id and one log line, instead of Fastify's bare JSON. A request that
 * had already reached Fastify is then failed with the same error and id, so that its audit event
 * and its log line (the error filter's) say what the caller was shown.
 */
function onClientError(timeouts: EdgeTimeouts, logger: Logger) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const refusal = errorForClient(error, timeouts);
    const errorId = randomUUID();
    const inFlight = serving.get(socket);
    const headersSent = inFlight?.reply.raw.headersSent === true;
    if (inFlight && !headersSent) noteInterruption(inFlight.request.raw, { error: refusal, errorId });
    // A caller that hung up is not answered: there is nobody to read it.
    if (socket.writable && !headersSent && !(refusal instanceof ClientClosedRequest)) writeRawEnvelope(socket, refusal, errorId, inFlight?.request.id ?? randomUUID());
    socket.destroy();
    if (!inFlight) logger.log({ errorId, code: refusal.code, status: problemOf(refusal).status, reason: error.code }, refusal.message);
  };
}

/**
 * Fastify options that put the edge in front of the router: every target is read canonically
 * before it is routed (the router, the audit and the admin guard see the same path), the router
 * never answers 414 on its own, Node's timeouts are set, and Node's and the router's refusals
 * are envelopes.
 */
export function edgeServerOptions(timeouts: EdgeTimeouts): Partial<FastifyServerOptions> {
  const logger = new Logger('edge');
  const headersTimeout = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  return {
    rewriteUrl: (raw) => targetOf(raw).url,
    // Node's header size limit (16 KiB) bounds a path; the edge refuses long ones itself (414).
    routerOptions: { maxParamLength: 65_536 },
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: timeouts.requestTimeoutMs,
      // Node checks its timeouts on this period (30 s by default, which would double a 30 s limit).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
    clientErrorHandler: onClientError(timeouts, logger),
    // The canonical target never makes the router fail; should it, the caller still gets the envelope.
    frameworkErrors: (error: Error, _request: FastifyRequest, reply: FastifyReply) => {
      const errorId = randomUUID();
      const refusal = new RequestTargetRefused({ status: 400, code: 'REQUEST.BAD_PATH', message: 'The request path could not be routed' });
      logger.log({ errorId, code: refusal.code, reason: (error as { code?: string }).code }, refusal.message);
      void reply.status(400).header('content-type', 'application/json; charset=utf-8').send(errorEnvelope(problemOf(refusal), errorId));
    },
  } as Partial<FastifyServerOptions>;
}

/**
 * Hooks that run first for every request: a refused target is answered (through the error filter,
 * so that a request under /api/v1 is audited), and each connection remembers the request it serves.
 */
export function installEdgeHooks(fastify: FastifyInstance): void {
  useJsonBodyParser(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    serving.set(request.raw.socket, { request, reply });
    const refusal = targetOf(request.raw).refusal;
    if (refusal) return done(new RequestTargetRefused(refusal));
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return done(new UnsupportedContentEncoding());
    done();
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    if (serving.get(request.raw.socket)?.request === request) serving.delete(request.raw.socket);
    done();
  });
}
