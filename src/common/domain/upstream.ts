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
