import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Logger, OnModuleDestroy } from '@nestjs/common';
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  handleWhen,
  IPolicy,
  retry,
  TaskCancelledError,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { Agent, request } from 'undici';
import { currentRequestContext, UpstreamCallRecord } from '../common/request-context';
import { Metrics } from '../common/metrics.port';
import { CircuitStateName, UpstreamCircuit, UpstreamError } from '../common/upstream';
import { PayloadCipher } from './payload-cipher';
import { RequestSigner } from './request-signer';
import { UpstreamSettings } from './upstream.settings';

export type UpstreamOperation = 'customer.create' | 'balance.read' | 'bank_account.create';

export interface UpstreamReply {
  readonly status: number;
  /** The envelope's `data` when the provider sent an envelope, else the whole JSON body. */
  readonly data: unknown;
  readonly latencyMs: number;
}

interface RawResponse {
  readonly status: number;
  readonly retryAfter?: string;
  readonly text: string;
}

/** Nothing reached the provider (no connection was made): any method may be retried. */
class NotSent extends Error {}
/** The connection failed after the request may have been written. */
class ConnectionLost extends Error {}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const MAX_RESPONSE_BYTES = 1024 * 1024;
const SANE_ERROR_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The request being served learns what the provider said, for its audit event. */
function noteUpstreamCall(record: UpstreamCallRecord): void {
  const context = currentRequestContext();
  if (context) context.upstream = { ...record };
}

/** A metrics label: `success`, or the failure's code without its prefix (`timeout`, `circuit_open`). */
function outcomeOf(result: unknown): string {
  if (!(result instanceof Error)) return 'success';
  return result instanceof UpstreamError ? result.code.replace(/^UPSTREAM\./, '').toLowerCase() : 'error';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function upstreamErrorId(body: unknown): string | undefined {
  const id = (body as { error?: { id?: unknown } } | undefined)?.error?.id;
  return typeof id === 'string' && SANE_ERROR_ID.test(id) ? id : undefined;
}

function retryAfterSeconds(header: string | undefined, fallback: number): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 3600) : fallback;
}

/**
 * The one HTTP client for the provider. Every call carries the credentials and the caller's
 * X-Request-Id, has a per-attempt timeout, and goes through one circuit breaker. GETs are retried
 * on network errors, 429 and 5xx; POSTs only when the connection was never made. Whatever goes
 * wrong comes out as an UpstreamError that says how sure we are of what happened upstream;
 * provider bodies and credentials never leave this class except as an error id.
 */
export class UpstreamHttpClient extends UpstreamCircuit implements OnModuleDestroy {
  private readonly logger = new Logger('Upstream');
  private readonly agent: Agent;
  private readonly breaker: CircuitBreakerPolicy;
  private readonly readPolicy: IPolicy;
  private readonly writePolicy: IPolicy;
  private openedAt = 0;

  constructor(
    private readonly settings: UpstreamSettings,
    private readonly signer: RequestSigner,
    private readonly cipher: PayloadCipher,
    private readonly metrics: Metrics,
  ) {
    super();
    this.agent = new Agent({
      connect: { timeout: settings.connectTimeoutMs },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      keepAliveTimeout: 10_000,
    });
    // The provider failing (not answering, or answering 5xx) opens the circuit; a 4xx is an answer.
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof NotSent || e instanceof ConnectionLost || e instanceof TaskCancelledError).orWhenResult(
        (r) => (r as RawResponse).status >= 500,
      ),
      { halfOpenAfter: settings.breakerHalfOpenMs, breaker: new ConsecutiveBreaker(settings.breakerThreshold) },
    );
    this.breaker.onBreak(() => {
      this.openedAt = Date.now();
      this.logger.warn({ halfOpenAfterMs: settings.breakerHalfOpenMs }, 'Upstream circuit opened');
    });
    this.breaker.onReset(() => this.logger.log('Upstream circuit closed'));
    this.breaker.onStateChange(() => metrics.upstreamCircuit(this.circuitState()));
    // An attempt reads the whole answer before it returns, so nothing is left to cancel then; not
    // aborting the finished attempt's signal spares an AbortError (a stack trace) per call.
    const attemptTimeout = timeout(settings.timeoutMs, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false });
    const backoff = new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 });
    const retryReads = retry(
      handleWhen((e) => e instanceof NotSent || e instanceof ConnectionLost).orWhenResult((r) => {
        const status = (r as RawResponse).status;
        return status === 429 || status >= 500;
      }),
      { maxAttempts: settings.retryMax, backoff },
    );
    const retryWrites = retry(
      handleWhen((e) => e instanceof NotSent),
      { maxAttempts: settings.retryMax, backoff },
    );
    this.readPolicy = wrap(retryReads, this.breaker, attemptTimeout);
    this.writePolicy = wrap(retryWrites, this.breaker, attemptTimeout);
  }

  override circuitState(): CircuitStateName {
    switch (this.breaker.state) {
      case CircuitState.Closed:
        return 'closed';
      case CircuitState.Open:
        return 'open';
      case CircuitState.HalfOpen:
        return 'half-open';
      default:
        return 'isolated';
    }
  }

  get(operation: UpstreamOperation, path: string): Promise<UpstreamReply> {
    return this.call(operation, 'GET', path);
  }

  /** POSTs `payload` signed with its reference and sealed by the cipher. */
  post(operation: UpstreamOperation, path: string, payload: Record<string, unknown> & { reference: string }): Promise<UpstreamReply> {
    return this.call(operation, 'POST', path, payload);
  }

  async onModuleDestroy(): Promise<void> {
    await this.agent.close();
  }

  private async call(
    operation: UpstreamOperation,
    method: 'GET' | 'POST',
    path: string,
    payload?: Record<string, unknown> & { reference: string },
  ): Promise<UpstreamReply> {
    const headers: Record<string, string> = {
      authorization: `${this.settings.authScheme} ${this.settings.bearerToken}`,
      accept: 'application/json',
      'x-request-id': currentRequestContext()?.requestId ?? randomUUID(),
    };
    let body: string | undefined;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers.signature = this.signer.sign(payload.reference);
      body = JSON.stringify(await this.cipher.seal(payload));
    }
    const url = this.settings.baseUrl + path;
    const policy = method === 'GET' ? this.readPolicy : this.writePolicy;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const measure = (outcome: unknown) =>
      this.metrics.upstreamCall(operation, outcomeOf(outcome), (performance.now() - started) / 1000);

    let raw: RawResponse;
    try {
      raw = await policy.execute<RawResponse>(({ signal }) => this.attempt(method, url, headers, body, signal));
    } catch (error) {
      const failure = this.failure(operation, method, error, elapsed());
      if (failure instanceof UpstreamError) noteUpstreamCall(failure.upstream);
      measure(failure);
      throw failure;
    }
    const latencyMs = elapsed();
    this.logger.debug({ operation, status: raw.status, latencyMs }, 'Upstream call');
    try {
      const reply = this.interpret(operation, method, raw, latencyMs);
      noteUpstreamCall({ status: reply.status, latencyMs });
      measure(reply);
      return reply;
    } catch (error) {
      if (error instanceof UpstreamError) noteUpstreamCall(error.upstream);
      measure(error);
      throw error;
    }
  }

  private async attempt(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<RawResponse> {
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, { method: method as 'GET' | 'POST', headers, body, signal, dispatcher: this.agent });
    } catch (error) {
      if (signal.aborted) throw error;
      const code = errorCode(error);
      throw code && NOT_SENT_CODES.has(code) ? new NotSent(code, { cause: error }) : new ConnectionLost(code ?? 'connection', { cause: error });
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ConnectionLost(errorCode(error) ?? 'body', { cause: error });
    }
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
      text: text.length > MAX_RESPONSE_BYTES ? '' : text,
    };
  }

  private interpret(operation: UpstreamOperation, method: string, raw: RawResponse, latencyMs: number): UpstreamReply {
    const json = parseJson(raw.text);
    const upstream = { status: raw.status, errorId: upstreamErrorId(json), latencyMs };
    const mayHaveActed = method === 'POST' ? 'unknown' : 'failed';

    if (raw.status >= 200 && raw.status < 300) {
      if (json === undefined || json === null || typeof json !== 'object') {
        throw new UpstreamError('UPSTREAM.BAD_RESPONSE', 'upstream_rejected', 'The provider answered with something that is not JSON', mayHaveActed, upstream);
      }
      const data = 'data' in json && (json).data !== undefined ? (json).data : json;
      return { status: raw.status, data, latencyMs };
    }
    if (raw.status === 401 || raw.status === 403) {
      // Our credentials, not the partner's: a misconfiguration to fix on our side.
      this.logger.error({ operation, status: raw.status, upstreamErrorId: upstream.errorId }, 'The provider refused the gateway credentials');
      throw new UpstreamError('UPSTREAM.CREDENTIALS_REFUSED', 'upstream_rejected', 'The provider refused the request', 'rejected', upstream, {
        details: 'The provider did not accept the gateway’s credentials; this is being looked into. Quote the error id to support.',
      });
    }
    if (raw.status === 404) {
      throw new UpstreamError('UPSTREAM.NOT_FOUND', 'not_found', 'The provider has no such resource', 'rejected', upstream);
    }
    if (raw.status === 409) {
      throw new UpstreamError('UPSTREAM.CONFLICT', 'upstream_rejected', 'The provider refused the request: it has already seen this reference', 'rejected', upstream);
    }
    if (raw.status === 429) {
      throw new UpstreamError('UPSTREAM.RATE_LIMITED', 'unavailable', 'The provider is limiting requests; try again later', 'failed', upstream, {
        retryAfterSeconds: retryAfterSeconds(raw.retryAfter, 1),
      });
    }
    if (raw.status >= 500) {
      throw new UpstreamError('UPSTREAM.SERVER_ERROR', 'upstream_rejected', 'The provider failed to handle the request', mayHaveActed, upstream, {
        details: `The provider answered ${raw.status}. Quote the error id to support.`,
      });
    }
    throw new UpstreamError('UPSTREAM.REJECTED', 'upstream_rejected', 'The provider refused the request', 'rejected', upstream, {
      details: `The provider answered ${raw.status}. Quote the error id to support.`,
    });
  }

  private failure(operation: UpstreamOperation, method: string, error: unknown, latencyMs: number): unknown {
    const upstream = { latencyMs };
    if (error instanceof BrokenCircuitError) {
      const waitMs = Math.max(1000, this.settings.breakerHalfOpenMs - (Date.now() - this.openedAt));
      return new UpstreamError('UPSTREAM.CIRCUIT_OPEN', 'unavailable', 'The provider is unavailable; try again later', 'failed', upstream, {
        details: 'Recent calls to the provider failed, so the gateway is not calling it for a moment.',
        retryAfterSeconds: Math.ceil(waitMs / 1000),
      });
    }
    if (error instanceof TaskCancelledError) {
      return new UpstreamError('UPSTREAM.TIMEOUT', 'upstream_timeout', 'The provider did not answer in time', method === 'POST' ? 'unknown' : 'failed', upstream, {
        details:
          method === 'POST'
            ? 'The request may or may not have been processed; retry with the same reference to find out.'
            : `No answer within ${this.settings.timeoutMs} ms.`,
      });
    }
    if (error instanceof NotSent) {
      this.logger.warn({ operation, reason: error.message }, 'Provider unreachable');
      return new UpstreamError('UPSTREAM.UNREACHABLE', 'upstream_rejected', 'The provider could not be reached', 'failed', upstream);
    }
    if (error instanceof ConnectionLost) {
      this.logger.warn({ operation, reason: error.message }, 'Connection to the provider lost');
      return new UpstreamError('UPSTREAM.CONNECTION_LOST', 'upstream_rejected', 'The connection to the provider was lost', method === 'POST' ? 'unknown' : 'failed', upstream, {
        details: method === 'POST' ? 'The request may or may not have been processed; retry with the same reference to find out.' : undefined,
      });
    }
    return error;
  }
}
