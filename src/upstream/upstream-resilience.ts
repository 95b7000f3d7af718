import { performance } from 'node:perf_hooks';
import { circuitBreaker, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, ExponentialBackoff, handleWhen, IBackoff } from 'cockatiel';
import type { CircuitStateName } from '../common/domain/upstream';
import { MAX_RETRY_BACKOFF_MS } from '../config/provider-call';
import { ConnectionLost, NotSent, RawResponse, TimedOut } from './upstream-transport';

export interface ResilienceSettings {
  readonly retryMax: number;
  readonly breakerThreshold: number;
  readonly breakerHalfOpenMs: number;
}

type Method = 'GET' | 'POST';

/** One attempt of a call that was retried: its answer or its failure, and how long it took. */
export interface Tried {
  readonly response?: RawResponse;
  readonly error?: unknown;
  readonly ms: number;
}

/** What a GET may be retried after: nothing sent, a lost connection, 429 and 5xx. */
function readRetries(error: unknown, response: RawResponse | undefined): boolean {
  if (response) return response.status === 429 || response.status >= 500;
  return error instanceof NotSent || error instanceof ConnectionLost;
}

/** What a POST may be retried after: only nothing sent (the provider cannot have it). */
function writeRetries(error: unknown): boolean {
  return error instanceof NotSent;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The provider call's resilience: one circuit breaker for every call (cockatiel), a per-attempt
 * timeout (the transport's: undici's own), and retries with exponential backoff and jitter
 * (cockatiel's) — GETs on network errors, 429 and 5xx; POSTs only when nothing was sent.
 *
 * A call that succeeds at once costs one pass through the breaker and nothing else: no timer, no
 * abort signal, no retry loop. The retries' machinery is made only once an attempt has failed in
 * a way the method may retry.
 */
export class UpstreamResilience {
  readonly breaker: CircuitBreakerPolicy;
  private readonly backoff = new ExponentialBackoff({ initialDelay: 100, maxDelay: MAX_RETRY_BACKOFF_MS });

  constructor(private readonly settings: ResilienceSettings) {
    // The provider failing (not answering, or answering 5xx) opens the circuit; a 4xx is an answer.
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof NotSent || e instanceof ConnectionLost || e instanceof TimedOut).orWhenResult((r) => (r as RawResponse).status >= 500),
      { halfOpenAfter: settings.breakerHalfOpenMs, breaker: new ConsecutiveBreaker(settings.breakerThreshold) },
    );
  }

  /**
   * One provider call of `method`: `attempt` through the breaker, again after a failure the method
   * may retry. Once it retries, `tried` is told of every attempt, the first included, in order; a
   * call answered at its first attempt never calls it.
   */
  async execute(method: Method, attempt: () => Promise<RawResponse>, tried?: (attempt: Tried) => void): Promise<RawResponse> {
    const started = performance.now();
    let response: RawResponse;
    try {
      response = await this.breaker.execute(attempt);
    } catch (error) {
      if (method === 'GET' ? !readRetries(error, undefined) : !writeRetries(error)) throw error;
      tried?.({ error, ms: performance.now() - started });
      return this.retried(method, attempt, error, undefined, tried);
    }
    if (method === 'GET' && readRetries(undefined, response)) {
      tried?.({ response, ms: performance.now() - started });
      return this.retried(method, attempt, undefined, response, tried);
    }
    return response;
  }

  circuitState(): CircuitStateName {
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

  /** Up to UPSTREAM_RETRY_MAX further attempts after the first failed; the last one's result is the call's. */
  private async retried(
    method: Method,
    attempt: () => Promise<RawResponse>,
    error: unknown,
    response: RawResponse | undefined,
    tried: ((attempt: Tried) => void) | undefined,
  ): Promise<RawResponse> {
    let backoff: IBackoff<unknown> | undefined;
    for (let retries = 1; retries <= this.settings.retryMax; retries++) {
      backoff = backoff ? backoff.next(undefined) : this.backoff.next();
      await sleep(backoff.duration);
      const started = performance.now();
      try {
        response = await this.breaker.execute(attempt);
        error = undefined;
      } catch (failure) {
        error = failure;
        response = undefined;
      }
      tried?.(response ? { response, ms: performance.now() - started } : { error, ms: performance.now() - started });
      const again = method === 'GET' ? readRetries(error, response) : writeRetries(error);
      if (!again) break;
    }
    if (response) return response;
    throw error;
  }
}
