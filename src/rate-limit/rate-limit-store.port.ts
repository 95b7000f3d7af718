/** One hit counted: where the key stands in its window, and whether it is blocked. Times in seconds. */
export interface RateLimitCount {
  readonly totalHits: number;
  readonly timeToExpire: number;
  readonly isBlocked: boolean;
  readonly timeToBlockExpire: number;
}

/**
 * Where rate-limit counters live: this process's memory, or Redis so that replicas share them. One
 * fixed window per key, started by its first hit; a hit over `limit` blocks the key for
 * `blockDurationMs`.
 */
export abstract class RateLimitStore {
  abstract increment(key: string, ttlMs: number, limit: number, blockDurationMs: number): Promise<RateLimitCount>;
}
