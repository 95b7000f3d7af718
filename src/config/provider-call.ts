import type { AppConfig } from './load-config';

/** The longest wait between two attempts of a provider call (the retry policy's backoff cap). */
export const MAX_RETRY_BACKOFF_MS = 2000;

/**
 * The longest a provider call can take: every attempt timing out, and the backoff between them.
 * What waits on a call in flight (an idempotency claim, the end of a shutdown) waits this long.
 */
export function longestProviderCallMs(config: Pick<AppConfig, 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRY_MAX'>): number {
  return config.UPSTREAM_TIMEOUT_MS * (config.UPSTREAM_RETRY_MAX + 1) + config.UPSTREAM_RETRY_MAX * MAX_RETRY_BACKOFF_MS;
}
