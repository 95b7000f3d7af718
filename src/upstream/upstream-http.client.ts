import { performance } from 'node:perf_hooks';
import { Logger, OnModuleDestroy } from '@nestjs/common';
import { BrokenCircuitError } from 'cockatiel';
import type { AuditOperation } from '../common/domain/audit-operations';
import { currentRecord, logContextOf, RequestRecord } from '../common/domain/request-record';
import { Metrics } from '../common/domain/metrics.port';
import { SPAN_ATTRIBUTES, traced } from '../common/telemetry/tracing';
import { AttemptFailure, CircuitStateName, UpstreamAttempt, UpstreamCircuit, UpstreamError } from '../common/domain/upstream';
import { PayloadCipher } from './payload-cipher';
import { providerErrors } from './provider-answers';
import { RequestSigner } from './request-signer';
import { Tried, UpstreamResilience } from './upstream-resilience';
import { ConnectionLost, NotSent, RawResponse, TimedOut, UpstreamTransport } from './upstream-transport';
import { UpstreamSettings } from './upstream.settings';

export interface UpstreamReply {
  readonly status: number;
  /** The envelope's `data` when the provider sent an envelope, else the whole JSON body. */
  readonly data: unknown;
  readonly latencyMs: number;
}

const SANE_ERROR_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

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

/** What an attempt that got no answer ran into; undefined for an error that is not the provider's. */
function failureOf(error: unknown): AttemptFailure | undefined {
  if (error instanceof BrokenCircuitError) return 'circuit_open';
  if (error instanceof TimedOut) return 'timeout';
  if (error instanceof NotSent) return 'not_sent';
  if (error instanceof ConnectionLost) return 'connection_lost';
  return undefined;
}

/** An attempt of a retried call, as the request's audit event keeps it: the provider's status and error id, or why there was none. */
function attemptOf(retry: number, tried: Tried): UpstreamAttempt {
  const latencyMs = Math.round(tried.ms);
  if (tried.response) {
    const errorId = tried.response.status >= 300 ? upstreamErrorId(parseJson(tried.response.text)) : undefined;
    return { retry, status: tried.response.status, latencyMs, ...(errorId === undefined ? {} : { errorId }) };
  }
  const failure = failureOf(tried.error);
  return { retry, latencyMs, ...(failure === undefined ? {} : { failure }) };
}

function retryAfterSeconds(header: string | undefined, fallback: number): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 3600) : fallback;
}

/**
 * The one HTTP client for the provider. Every call carries the credentials and the caller's
 * X-Request-Id and goes through the resilience policies (upstream-resilience.ts) over the transport
 * (upstream-transport.ts); whatever goes wrong comes out as an UpstreamError from the table of
 * provider answers (provider-answers.ts), which says how sure we are of what happened upstream.
 * Provider bodies and credentials never leave this class except as an error id.
 */
export class UpstreamHttpClient extends UpstreamCircuit implements OnModuleDestroy {
  private readonly logger = new Logger('Upstream');
  private readonly transport: UpstreamTransport;
  private readonly resilience: UpstreamResilience;
  private openedAt = 0;

  constructor(
    private readonly settings: UpstreamSettings,
    private readonly signer: RequestSigner,
    private readonly cipher: PayloadCipher,
    private readonly metrics: Metrics,
  ) {
    super();
    this.transport = new UpstreamTransport(settings);
    this.resilience = new UpstreamResilience(settings);
    this.resilience.breaker.onBreak(() => {
      this.openedAt = Date.now();
      this.logger.warn({ halfOpenAfterMs: settings.breakerHalfOpenMs }, 'Upstream circuit opened');
    });
    this.resilience.breaker.onReset(() => this.logger.log('Upstream circuit closed'));
    this.resilience.breaker.onStateChange(() => metrics.upstreamCircuit(this.circuitState()));
  }

  override circuitState(): CircuitStateName {
    return this.resilience.circuitState();
  }

  /** GETs `path` for the request being served, whose record the call is noted in (noteUpstreamCall). */
  get(operation: AuditOperation, path: string): Promise<UpstreamReply> {
    return this.call(operation, 'GET', path);
  }

  /** POSTs `payload` signed with its reference and sealed by the cipher, for the request being served. */
  post(operation: AuditOperation, path: string, payload: Record<string, unknown> & { reference: string }): Promise<UpstreamReply> {
    return this.call(operation, 'POST', path, payload);
  }

  async onModuleDestroy(): Promise<void> {
    await this.transport.close();
  }

  /** One provider call, in a span of its own: the undici span (its one or more attempts) is its child, and carries the trace to the provider. */
  private call(
    operation: AuditOperation,
    method: 'GET' | 'POST',
    path: string,
    payload?: Record<string, unknown> & { reference: string },
  ): Promise<UpstreamReply> {
    return traced(
      'provider.call',
      { [SPAN_ATTRIBUTES.operation]: operation, 'http.request.method': method },
      () => this.untracedCall(operation, method, path, currentRecord(), payload),
      { succeeded: outcomeOf, failed: outcomeOf },
    );
  }

  private async untracedCall(
    operation: AuditOperation,
    method: 'GET' | 'POST',
    path: string,
    record: RequestRecord,
    payload?: Record<string, unknown> & { reference: string },
  ): Promise<UpstreamReply> {
    const headers: Record<string, string> = {
      authorization: `${this.settings.authScheme} ${this.settings.bearerToken}`,
      accept: 'application/json',
      'x-request-id': record.requestId,
    };
    let body: string | undefined;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers.signature = this.signer.sign(payload.reference);
      body = JSON.stringify(await this.cipher.seal(payload));
    }
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const measure = (outcome: unknown) => this.metrics.upstreamCall(operation, outcomeOf(outcome), (performance.now() - started) / 1000);

    // Filled only when the call is retried, or got no answer: each attempt, for the request's audit event
    // (the request log's timeline). A call answered at once is its UpstreamFacts alone.
    let attempts: UpstreamAttempt[] | undefined;
    const tried = (attempt: Tried) => (attempts ??= []).push(attemptOf(attempts.length, attempt));
    let raw: RawResponse;
    try {
      raw = await this.resilience.execute(method, () => this.transport.send(method, path, headers, body), tried);
    } catch (error) {
      // Tried once, no answer: why is known here, and nowhere after (an error code names several causes' outcome).
      if (!attempts && failureOf(error)) tried({ error, ms: performance.now() - started });
      if (attempts) record.noteUpstreamAttempts(attempts);
      const failure = this.failure(operation, method, error, elapsed(), record);
      if (failure instanceof UpstreamError) record.noteUpstreamCall(failure.upstream);
      measure(failure);
      throw failure;
    }
    const latencyMs = elapsed();
    if (attempts) record.noteUpstreamAttempts(attempts);
    try {
      const reply = this.interpret(operation, method, raw, latencyMs, record);
      record.noteUpstreamCall({ status: reply.status, latencyMs });
      measure(reply);
      return reply;
    } catch (error) {
      if (error instanceof UpstreamError) record.noteUpstreamCall(error.upstream);
      measure(error);
      throw error;
    }
  }

  private interpret(operation: AuditOperation, method: 'GET' | 'POST', raw: RawResponse, latencyMs: number, record: RequestRecord): UpstreamReply {
    const json = parseJson(raw.text);
    const upstream = { status: raw.status, errorId: upstreamErrorId(json), latencyMs };

    if (raw.status >= 200 && raw.status < 300) {
      if (json === undefined || json === null || typeof json !== 'object') throw providerErrors.badResponse(method, upstream);
      const data = 'data' in json && json.data !== undefined ? json.data : json;
      return { status: raw.status, data, latencyMs };
    }
    if (raw.status === 401 || raw.status === 403) {
      // Our credentials, not the partner's: a misconfiguration to fix on our side.
      this.logger.error(
        { ...logContextOf(record), operation, status: raw.status, upstreamErrorId: upstream.errorId },
        'The provider refused the gateway credentials',
      );
      throw providerErrors.credentialsRefused(upstream);
    }
    if (raw.status === 404) throw providerErrors.notFound(upstream);
    if (raw.status === 409) throw providerErrors.conflict(upstream);
    if (raw.status === 429) throw providerErrors.rateLimited(upstream, retryAfterSeconds(raw.retryAfter, 1));
    if (raw.status >= 500) throw providerErrors.serverError(method, upstream);
    throw providerErrors.rejected(upstream);
  }

  private failure(operation: AuditOperation, method: 'GET' | 'POST', error: unknown, latencyMs: number, record: RequestRecord): unknown {
    const upstream = { latencyMs };
    if (error instanceof BrokenCircuitError) {
      const waitMs = Math.max(1000, this.settings.breakerHalfOpenMs - (Date.now() - this.openedAt));
      return providerErrors.circuitOpen(upstream, Math.ceil(waitMs / 1000));
    }
    if (error instanceof TimedOut) return providerErrors.timeout(method, upstream, this.settings.timeoutMs);
    if (error instanceof NotSent) {
      this.logger.warn({ ...logContextOf(record), operation, reason: error.message }, 'Provider unreachable');
      return providerErrors.unreachable(upstream);
    }
    if (error instanceof ConnectionLost) {
      this.logger.warn({ ...logContextOf(record), operation, reason: error.message }, 'Connection to the provider lost');
      return providerErrors.connectionLost(method, upstream);
    }
    return error;
  }
}
