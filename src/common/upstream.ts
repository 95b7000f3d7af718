import { DomainError, ErrorKind } from './domain-error';

/**
 * How sure we are of what happened upstream:
 * - `rejected`: the provider answered and said no;
 * - `failed`: the provider did not act (unreachable, 5xx, circuit open);
 * - `unknown`: the request may have reached the provider and we do not know its fate (timeout or
 *   connection lost after sending) — a retry with the same reference is the way to find out.
 */
export type UpstreamOutcome = 'rejected' | 'failed' | 'unknown';

export class UpstreamError extends DomainError {
  constructor(
    code: string,
    kind: ErrorKind,
    message: string,
    readonly outcome: UpstreamOutcome,
    readonly upstream: { status?: number; errorId?: string; latencyMs?: number } = {},
    options: { details?: string; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(code, kind, message, options);
  }
}

export type CircuitStateName = 'closed' | 'open' | 'half-open' | 'isolated';

/** The provider's circuit breaker, as health and metrics report it. */
export abstract class UpstreamCircuit {
  abstract circuitState(): CircuitStateName;
}
