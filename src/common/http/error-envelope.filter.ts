import { randomUUID } from 'node:crypto';
import { Metrics } from '../domain/metrics.port';
import { noteErrorCodeOnSpan } from '../telemetry/tracing';
import { STATUS_CODES } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, FieldProblem } from '../domain/domain-error';
import { ErrorKind } from '../domain/error-codes';
import { answeredVersion, API_VERSION_HEADER, type ApiVersion, CURRENT_API_VERSION } from '../domain/api-versions';
import { contextOf } from './request-context';
import { ERROR_MESSAGES } from '../domain/error-messages';
import { ERROR_CODES, ErrorCode } from '../domain/error-codes';
import { asFailureAnswer } from './answer';
import { ErrorEnvelope } from './envelope';
import { interruptionOf } from './interruption';
import { ErrorDocs } from './error-docs';
import { requestOrigin } from './request-origin';
import { AUDIT_RECEIPT_HEADER, RequestRecorder } from './request-recorder.port';

const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid_input: 400,
  request_timeout: 408,
  expectation_failed: 417,
  uri_too_long: 414,
  headers_too_large: 431,
  // nginx's convention for a caller that hung up before its request arrived whole.
  client_closed: 499,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  upstream_rejected: 502,
  unavailable: 503,
  upstream_timeout: 504,
  internal: 500,
};

/** The status an error code is answered with (REQUEST.REFUSED keeps the framework's 4xx). */
export function statusOfCode(code: ErrorCode): number {
  return STATUS_BY_KIND[ERROR_CODES[code]];
}

/** Fastify's own errors (body parsing, limits) that reach us with a status and a code. */
const FASTIFY_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'REQUEST.MALFORMED_JSON', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'REQUEST.MALFORMED_JSON', message: 'The request body is empty but the content type is JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'REQUEST.BODY_TOO_LARGE', message: ERROR_MESSAGES['REQUEST.BODY_TOO_LARGE'] },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'REQUEST.UNSUPPORTED_MEDIA_TYPE', message: ERROR_MESSAGES['REQUEST.UNSUPPORTED_MEDIA_TYPE'] },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'REQUEST.BAD_CONTENT_LENGTH', message: ERROR_MESSAGES['REQUEST.BAD_CONTENT_LENGTH'] },
};

/** What a 401 from the API asks for (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="partner-gateway"';

export interface Problem {
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;
  /** The error's own WWW-Authenticate challenge; a 401 without one gets BEARER_CHALLENGE. */
  readonly challenge?: string;
  /** Set when the failure is ours rather than the caller's: logged with its stack. */
  readonly unexpected?: unknown;
}

function fromDomainError(error: DomainError): Problem {
  return {
    status: STATUS_BY_KIND[error.kind],
    code: error.code,
    message: error.message,
    details: error.details ?? error.message,
    fields: error.fields,
    retryAfterSeconds: error.retryAfterSeconds,
    challenge: error.challenge,
  };
}

function fromHttpException(exception: HttpException): Problem {
  const status = exception.getStatus();
  const text = STATUS_CODES[status] ?? 'Error';
  if (status === 404) {
    // The router's own 404 names the method and the raw URL, query included: never echoed.
    return { status, code: 'ROUTE.NOT_FOUND', message: 'No such route', details: 'No endpoint matches this method and path' };
  }
  if (status >= 500) {
    // A health check's (Terminus's) failure: which check, and why, is an admin's (/health/details), never this answer's.
    return { status: 503, code: 'SERVICE.NOT_READY', message: ERROR_MESSAGES['SERVICE.NOT_READY'], details: text };
  }
  // Other framework exceptions may carry what the caller sent; only the status is said.
  return { status, code: 'REQUEST.REFUSED', message: text, details: text };
}

function fromFastifyError(error: { code: string; statusCode: number }): Problem | undefined {
  const known = FASTIFY_ERRORS[error.code];
  if (!known) return undefined;
  return { status: statusOfCode(known.code), code: known.code, message: known.message, details: known.message };
}

function isFastifyError(value: unknown): value is { code: string; statusCode: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    (value as { code: string }).code.startsWith('FST_') &&
    typeof (value as { statusCode?: unknown }).statusCode === 'number'
  );
}

export function problemOf(exception: unknown): Problem {
  if (exception instanceof DomainError) return fromDomainError(exception);
  if (exception instanceof HttpException) {
    // The Fastify adapter wraps Fastify's 4xx errors (body parsing, limits), keeping them as cause.
    const known = isFastifyError(exception.cause) ? fromFastifyError(exception.cause) : undefined;
    return known ?? fromHttpException(exception);
  }
  if (isFastifyError(exception)) {
    const known = fromFastifyError(exception);
    if (known) return known;
    if (exception.statusCode < 500) {
      const text = STATUS_CODES[exception.statusCode] ?? 'Bad Request';
      return { status: exception.statusCode, code: 'REQUEST.REFUSED', message: text, details: text };
    }
  }
  return {
    status: 500,
    code: 'INTERNAL',
    message: 'The service failed to handle the request',
    details: 'An unexpected error occurred; quote the error id to support',
    unexpected: exception,
  };
}

/** The body of an error response: the provider's envelope, with the code that says what went wrong. */
export function errorEnvelope(problem: Problem, errorId: string, links: { readonly requestLogUrl?: string; readonly docUrl?: string } = {}): ErrorEnvelope {
  const { requestLogUrl, docUrl } = links;
  return {
    status: problem.status,
    data: null,
    message: STATUS_CODES[problem.status] ?? (problem.status === 499 ? 'Client Closed Request' : 'Error'),
    error: {
      id: errorId,
      code: problem.code,
      details: problem.details,
      message: problem.message,
      ...(problem.fields && problem.fields.length > 0 ? { fields: problem.fields } : {}),
      ...(requestLogUrl === undefined ? {} : { request_log_url: requestLogUrl }),
      ...(docUrl === undefined ? {} : { doc_url: docUrl }),
    },
  };
}

/** The version a refused request is answered under, when the access guard did not get to choose it (an unknown one named: its caller's, or the current one). */
function versionOfRefused(request: FastifyRequest): ApiVersion {
  const pinned = contextOf(request.raw).identity?.caller?.apiVersion;
  return answeredVersion(request.headers[API_VERSION_HEADER.toLowerCase()], pinned) ?? pinned ?? CURRENT_API_VERSION;
}

/**
 * The one place that shapes errors. Every exception becomes the envelope with a fresh error id,
 * logged once; stack traces, SQL and upstream bodies stay in the logs, never in the response.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  constructor(
    @Optional() private readonly recorder?: RequestRecorder,
    @Optional() private readonly metrics?: Metrics,
    @Optional() private readonly docs?: ErrorDocs,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    void this.respond(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  private async respond(exception: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // A timeout or a caller that hung up is answered as what it was, under the id already shown; an
    // error given its id before the answer (an audit event held with it names it), under that one.
    const interrupted = interruptionOf(request, exception);
    const errorId = interrupted?.errorId ?? (exception instanceof DomainError ? exception.errorId : undefined) ?? randomUUID();
    let problem = problemOf(interrupted?.error ?? exception);
    this.log(problem, errorId, request.id);
    let logAddress: string | undefined;
    let receipt: string | undefined;
    try {
      receipt = await this.recorder?.recordFailure(
        request,
        { errorId, code: problem.code, status: problem.status, message: problem.message },
        interrupted?.error ?? exception,
      );
      // Recorded: the caller's request log shows it (a request that could not be recorded has no address).
      logAddress = this.recorder?.logAddressOf(request);
    } catch (recordingFailure) {
      // The request could not be recorded: it fails closed, under the same error id.
      problem = problemOf(recordingFailure);
      this.log(problem, errorId, request.id);
    }

    const envelope = errorEnvelope(problem, errorId, {
      requestLogUrl: logAddress,
      docUrl: this.docs?.urlOf(problem.code, requestOrigin(request)),
    });
    this.metrics?.errorAnswered(problem.code);
    noteErrorCodeOnSpan(problem.code);
    if (problem.challenge !== undefined) {
      void reply.header('www-authenticate', problem.challenge);
    } else if (problem.status === 401 && !reply.hasHeader('www-authenticate')) {
      // RFC 6750: the scheme the caller should use; the body stays the provider's 401.
      void reply.header('www-authenticate', BEARER_CHALLENGE);
    }
    if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
    if (problem.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(Math.max(1, Math.ceil(problem.retryAfterSeconds))));
    }
    // A refusal before the access guard chose the version (no route, an edge refusal, a bad Gateway-Version): the one
    // the request named, when the gateway knows it, else its caller's pinned one, else the current one.
    if (!reply.hasHeader(API_VERSION_HEADER)) void reply.header(API_VERSION_HEADER, versionOfRefused(request));
    // An error is never kept by a cache (a route's own cache-control, set before its handler failed, included): its
    // doc_url is on the origin the request named, and its id is this request's.
    void reply.header('cache-control', 'no-store');
    void reply.status(problem.status).header('content-type', 'application/json; charset=utf-8').send(asFailureAnswer(envelope));
  }

  private log(problem: Problem, errorId: string, requestId: string): void {
    const logFields = { errorId, code: problem.code, status: problem.status, requestId };
    if (problem.unexpected !== undefined) {
      this.logger.error({ ...logFields, err: problem.unexpected }, 'Unexpected error');
    } else if (problem.status >= 500) {
      this.logger.warn(logFields, problem.message);
    } else {
      this.logger.log(logFields, problem.message);
    }
  }
}
