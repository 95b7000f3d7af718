/**
 * When a delivery is attempted again (docs/webhooks.md, "Retries"): the Standard Webhooks schedule,
 * after the first attempt at once: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each with
 * up to 10 % of jitter either way, so that endpoints recovering together are not all retried at the
 * same moment. Ten attempts over about three and a half days.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 14 * 3600e3, 20 * 3600e3, 24 * 3600e3];

/** A failure this long after the one before starts a new run of failures: the 5 days count from the run's first. */
export const FAILURE_RUN_GAP_HOURS = 25;

/** How long an endpoint may fail every attempt before it is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;

/** How long an attempt waits for the endpoint's answer. */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/** The most a Retry-After is followed: a longer one waits for the schedule's own next attempt at most. */
const MOST_RETRY_AFTER_MS = 24 * 3600e3;

/** What an attempt came to. */
export type AttemptOutcome =
  | { readonly kind: 'delivered' }
  /** The endpoint answered 410 Gone: it is disabled, and nothing more is sent to it. */
  | { readonly kind: 'gone' }
  | { readonly kind: 'failed'; readonly retryAfterMs?: number };

/** A status as an outcome: 2xx is delivered, 410 is gone, anything else (3xx included: redirects are not followed) failed. */
export function outcomeOf(status: number | undefined, retryAfter?: string | null): AttemptOutcome {
  if (status !== undefined && status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  const retryAfterMs = status === 429 || status === 503 ? retryAfterMsOf(retryAfter) : undefined;
  return retryAfterMs === undefined ? { kind: 'failed' } : { kind: 'failed', retryAfterMs };
}

/** A Retry-After header (seconds, or an HTTP date) as milliseconds from now; undefined when it is neither. */
export function retryAfterMsOf(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MOST_RETRY_AFTER_MS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || !/[A-Za-z]/.test(trimmed)) return undefined;
  return Math.min(Math.max(0, at - now), MOST_RETRY_AFTER_MS);
}

/**
 * When the attempt after attempt `attempt` (1 for the first) is due, in milliseconds from now, or
 * undefined when the schedule is spent. A Retry-After the endpoint gave replaces the schedule's delay.
 * `random` is in [0, 1).
 */
export function nextAttemptDelayMs(attempt: number, retryAfterMs?: number, random: number = Math.random()): number | undefined {
  const delay = RETRY_DELAYS_MS[attempt - 1];
  if (delay === undefined) return undefined;
  if (retryAfterMs !== undefined) return retryAfterMs;
  return Math.round(delay * (0.9 + 0.2 * random));
}
