import {
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
import type { CircuitStateName } from '../common/domain/upstream';
import { MAX_RETRY_BACKOFF_MS } from '../config/provider-call';
import { ConnectionLost, NotSent, RawResponse } from './upstream-transport';

export interface ResilienceSettings {
  readonly timeoutMs: number;
  readonly retryMax: number;
  readonly breakerThreshold: number;
  readonly breakerHalfOpenMs: number;
}

/**
 * The provider call's policies (cockatiel): a per-attempt timeout, one circuit breaker for every
 * call, and retries — GETs on network errors, 429 and 5xx; POSTs only when nothing was sent.
 */
export class UpstreamResilience {
  readonly breaker: CircuitBreakerPolicy;
  readonly reads: IPolicy;
  readonly writes: IPolicy;

  constructor(settings: ResilienceSettings) {
    // The provider failing (not answering, or answering 5xx) opens the circuit; a 4xx is an answer.
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof NotSent || e instanceof ConnectionLost || e instanceof TaskCancelledError).orWhenResult(
        (r) => (r as RawResponse).status >= 500,
      ),
      { halfOpenAfter: settings.breakerHalfOpenMs, breaker: new ConsecutiveBreaker(settings.breakerThreshold) },
    );
    // An attempt reads the whole answer before it returns, so nothing is left to cancel then; not
    // aborting the finished attempt's signal spares an AbortError (a stack trace) per call.
    const attemptTimeout = timeout(settings.timeoutMs, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false });
    const backoff = new ExponentialBackoff({ initialDelay: 100, maxDelay: MAX_RETRY_BACKOFF_MS });
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
    this.reads = wrap(retryReads, this.breaker, attemptTimeout);
    this.writes = wrap(retryWrites, this.breaker, attemptTimeout);
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
}
