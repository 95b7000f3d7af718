import { DomainError } from './domain-error';
import { isCatalogued } from './error-messages';
import type { ErrorCode } from './error-codes';

/**
 * How sure we are of what happened upstream:
 * - `rejected`: the provider answered and said no;
 * - `failed`: the provider did not act (unreachable, 5xx, circuit open);
 * - `unknown`: the request may have reached the provider and we do not know its fate (timeout or
 *   connection lost after sending) — a retry with the same reference is the way to find out.
 */
export type UpstreamOutcome = 'rejected' | 'failed' | 'unknown';

/** The code of the provider's "this reference has already been used" answer (its 409). */
export const REFERENCE_ALREADY_SEEN: ErrorCode = 'UPSTREAM.CONFLICT';

/** What is known of a provider call: its status, the provider's error id, how long it took. */
export interface UpstreamFacts {
  readonly status?: number;
  readonly errorId?: string;
  readonly latencyMs?: number;
}

/** Why an attempt got no answer: no time left, nothing sent, the connection lost after sending, the circuit open. */
export type AttemptFailure = 'timeout' | 'not_sent' | 'connection_lost' | 'circuit_open';

/**
 * One attempt of a provider call that was tried more than once (a retried read; a write retried
 * because nothing was sent), or of one that got no answer: `retry` 0 is the first. A call answered
 * at its first attempt has no such list: its one attempt is the call's UpstreamFacts.
 */
export interface UpstreamAttempt {
  readonly retry: number;
  /** The provider's status, when it answered. */
  readonly status?: number;
  readonly latencyMs: number;
  /** The provider's error id, when its answer carried one. */
  readonly errorId?: string;
  /** Why there was no answer. */
  readonly failure?: AttemptFailure;
}

export interface UpstreamErrorSpec {
  readonly code: ErrorCode;
  readonly message: string;
  readonly outcome: UpstreamOutcome;
  readonly upstream?: UpstreamFacts;
  readonly details?: string;
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

/**
 * A provider call that did not give what was asked. Built by the named constructors of
 * `src/upstream/provider-answers.ts` (`providerErrors.timeout('POST', facts)`), one per row of the
 * table that docs/decisions.md shows.
 */
export class UpstreamError extends DomainError {
  readonly outcome: UpstreamOutcome;
  readonly upstream: UpstreamFacts;

  constructor(spec: UpstreamErrorSpec) {
    const options = { details: spec.details, retryAfterSeconds: spec.retryAfterSeconds, cause: spec.cause };
    // A catalogued code says the catalogue's words (the table of provider answers reads them too).
    if (isCatalogued(spec.code)) super(spec.code, options);
    else super(spec.code, spec.message, options);
    this.outcome = spec.outcome;
    this.upstream = spec.upstream ?? {};
  }
}

export type CircuitStateName = 'closed' | 'open' | 'half-open' | 'isolated';

/** The provider's circuit breaker, as health and metrics report it. */
export abstract class UpstreamCircuit {
  abstract circuitState(): CircuitStateName;
}
