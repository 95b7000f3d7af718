import type { GatewaySettings } from './load-config';

/** The longest wait between two attempts of a provider call (the retry policy's backoff cap). */
export const MAX_RETRY_BACKOFF_MS = 2000;

/**
 * The longest a provider call can take: every attempt timing out, and the backoff between them.
 * What waits on a call in flight (an idempotency claim, the end of a shutdown) waits this long.
 */
export function longestProviderCallMs(config: Pick<GatewaySettings, 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRY_MAX'>): number {
  return config.UPSTREAM_TIMEOUT_MS * (config.UPSTREAM_RETRY_MAX + 1) + config.UPSTREAM_RETRY_MAX * MAX_RETRY_BACKOFF_MS;
}

/**
 * A shutdown's times: SHUTDOWN_GRACE_MS for the requests in flight; then `settleMs` for the work
 * behind connections cut at its end to record its outcome (at most one provider call with its
 * retries, and 2 s); `deadlineMs` after the signal the process exits whatever happens (10 s more).
 * An orchestrator must not kill it sooner (deploy/kubernetes: terminationGracePeriodSeconds).
 */
export function shutdownTimes(config: Pick<GatewaySettings, 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRY_MAX' | 'SHUTDOWN_GRACE_MS'>): {
  readonly graceMs: number;
  readonly settleMs: number;
  readonly deadlineMs: number;
} {
  const settleMs = longestProviderCallMs(config) + 2_000;
  return { graceMs: config.SHUTDOWN_GRACE_MS, settleMs, deadlineMs: config.SHUTDOWN_GRACE_MS + settleMs + 10_000 };
}
