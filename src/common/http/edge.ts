import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { problemOf, errorEnvelope } from './error-envelope.filter';
import { REQUEST_ID_HEADER } from './request-id';
import type { ErrorDocs } from './error-docs';
import { isHostAndPort, requestOrigin } from './request-origin';
import type { IncomingMessage } from 'node:http';
import {
  ClientClosedRequest,
  ExpectationFailed,
  MalformedRequest,
  MethodNotRouted,
  RequestHeadersTooLarge,
  RequestTargetRefused,
  RequestTimedOut,
  UnsupportedContentEncoding,
} from './edge.errors';
import { noteInterruption } from './interruption';
import type { EdgeStage } from './edge-stage';
import { contextOf, noteServed, noteServing, servedOn } from './request-context';
import { useJsonBodyParser } from './json-body';

export interface EdgeTimeouts {
  /** Headers and body must have arrived whole by then. */
  readonly requestTimeoutMs: number;
  /** Headers must have arrived by then (at most requestTimeoutMs). */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
}

function errorForClient(error: NodeJS.ErrnoException, timeouts: EdgeTimeouts): DomainError {
  // The connection ended in the middle of a request: the caller hung up.
  if (error.code === 'HPE_INVALID_EOF_STATE') return new ClientClosedRequest();
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimedOut(timeouts.requestTimeoutMs);
  if (error.code === 'HPE_HEADER_OVERFLOW') return new RequestHeadersTooLarge();
  return new MalformedRequest();
}

/** Writes an error envelope straight onto a connection whose request Node could not hand over. */
function writeRawEnvelope(socket: Socket, error: DomainError, errorId: string, requestId: string, docs: ErrorDocs): void {
  const problem = problemOf(error);
  const body = JSON.stringify(errorEnvelope(problem, errorId, { docUrl: docs.urlOf(problem.code, undefined) }));
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
function onClientError(timeouts: EdgeTimeouts, logger: Logger, docs: ErrorDocs) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const refusal = errorForClient(error, timeouts);
    const errorId = randomUUID();
    const inFlight = servedOn(socket);
    const headersSent = inFlight?.reply.raw.headersSent === true;
    if (inFlight && !headersSent) noteInterruption(inFlight.request.raw, { error: refusal, errorId });
    // A caller that hung up is not answered: there is nobody to read it.
    if (socket.writable && !headersSent && !(refusal instanceof ClientClosedRequest))
      writeRawEnvelope(socket, refusal, errorId, inFlight?.request.id ?? randomUUID(), docs);
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
export function edgeServerOptions(timeouts: EdgeTimeouts, docs: ErrorDocs): Partial<FastifyServerOptions> {
  const logger = new Logger('edge');
  const headersTimeout = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  return {
    rewriteUrl: (raw) => contextOf(raw).target.url,
    // Node's header size limit (16 KiB) bounds a path; the edge refuses long ones itself (414).
    routerOptions: { maxParamLength: 65_536 },
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      // A request without Host is answered here, in the envelope (headerProblem), not by Node's bare 400.
      requireHostHeader: false,
      headersTimeout,
      requestTimeout: timeouts.requestTimeoutMs,
      // Node checks its timeouts on this period (30 s by default, which would double a 30 s limit).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
    clientErrorHandler: onClientError(timeouts, logger, docs),
    // The canonical target never makes the router fail; should it, the caller still gets the envelope.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      const errorId = randomUUID();
      const refusal = new RequestTargetRefused({ status: 400, code: 'REQUEST.BAD_PATH', message: 'The request path could not be routed' });
      logger.log({ errorId, code: refusal.code, reason: (error as { code?: string }).code }, refusal.message);
      void reply
        .status(400)
        .header('content-type', 'application/json; charset=utf-8')
        .send(errorEnvelope(problemOf(refusal), errorId, { docUrl: docs.urlOf(refusal.code, requestOrigin(request)) }));
    },
  } as Partial<FastifyServerOptions>;
}

/** Headers that may appear once: a second one is a request two parsers could read differently. */
const SINGLE_HEADERS = new Set(['host', 'authorization', 'content-type', 'content-length']);
/** A Host value: a registered name or an IPv4 address, or an IPv6 literal, and an optional port. */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]{2,60}\]|[A-Za-z0-9._~!$&'()*+,;=%-]{0,255})(?::\d{0,5})?$/;

/**
 * Why what a trusted proxy forwarded is refused: an X-Forwarded-Host that is not a host[:port] (a
 * path or a query in it would be pasted into every URL built from it), an X-Forwarded-Proto that is
 * not http or https. Fastify reads them only from a trusted proxy; from anyone else they are ignored.
 */
function forwardedProblem(request: FastifyRequest): DomainError | undefined {
  // A host other than the Host header's is one a trusted proxy forwarded (an HTTP/1.0 request without Host has neither: '').
  const host = request.host;
  const forwarded = host !== request.headers.host && !(host === '' && request.headers.host === undefined);
  if (forwarded && !isHostAndPort(host)) return MalformedRequest.badForwarded('X-Forwarded-Host');
  if (request.protocol !== 'http' && request.protocol !== 'https') return MalformedRequest.badForwarded('X-Forwarded-Proto');
  return undefined;
}

/** Why the request's headers are refused (Host missing, repeated or invalid; a single header sent twice; an Expect not met), or undefined. */
function headerProblem(raw: IncomingMessage): DomainError | undefined {
  const seen = new Set<string>();
  const lines = raw.rawHeaders;
  for (let i = 0; i < lines.length; i += 2) {
    const name = lines[i].toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen.has(name)) return name === 'host' ? MalformedRequest.badHost('repeated') : MalformedRequest.repeatedHeader(lines[i]);
    seen.add(name);
  }
  const host = raw.headers.host;
  if (host === undefined) {
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) return MalformedRequest.badHost('missing');
  } else if (!HOST_VALUE.test(host)) {
    return MalformedRequest.badHost('invalid');
  }
  const expect = raw.headers.expect;
  if (expect !== undefined && expect.trim().toLowerCase() !== '100-continue') return new ExpectationFailed();
  return undefined;
}

/**
 * The server's side of the edge: the JSON body parser, and two kinds of request Node would answer
 * or drop itself handed to the pipeline's road: an Expect it cannot meet (Node's bare 417, answered
 * by the target stage), and CONNECT (which Node closes without a word).
 */
export function installEdgeServer(fastify: FastifyInstance, docs: ErrorDocs): void {
  useJsonBodyParser(fastify);
  const logger = new Logger('edge');
  // Served like any request, so that headerProblem answers it with the envelope, the request id and an audit event.
  fastify.server.on('checkExpectation', (request: IncomingMessage, response: unknown) => fastify.server.emit('request', request, response));
  fastify.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    const refusal = new MethodNotRouted();
    const errorId = randomUUID();
    if (socket.writable) writeRawEnvelope(socket, refusal, errorId, randomUUID(), docs);
    socket.destroy();
    logger.log({ errorId, code: refusal.code, status: problemOf(refusal).status, method: 'CONNECT' }, refusal.message);
  });
}

/**
 * The target stage: its connection remembers the request it serves, and a refused target or
 * refused headers are answered (through the error filter, so that a request under /api/v1 is
 * audited and logged).
 */
export function targetStage(): EdgeStage {
  return {
    name: 'target',
    onRequest: (request, reply) => {
      noteServing(request, reply);
      const refusal = contextOf(request.raw).target.refusal;
      if (refusal) throw new RequestTargetRefused(refusal);
      const problem = headerProblem(request.raw) ?? forwardedProblem(request);
      if (problem) throw problem;
      const encoding = request.headers['content-encoding'];
      if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') throw new UnsupportedContentEncoding();
    },
    onResponse: (request) => noteServed(request),
  };
}
