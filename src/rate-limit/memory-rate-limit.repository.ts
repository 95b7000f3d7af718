import { OnModuleDestroy } from '@nestjs/common';
import { RateLimitCount, RateLimitStore } from './rate-limit-store.port';

interface Window {
  hits: number;
  /** When the window started by the first hit ends (ms since the epoch). */
  endsAt: number;
  /** When a block set by a hit over the limit ends; 0 when not blocked. */
  blockedUntil: number;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Rate-limit counters in this process's memory, counted the way RedisRateLimitRepository counts them.
 * O(1) per hit, whatever the limit (a store that keeps one timestamp per hit filters them all on
 * every request). Ended windows are swept once a minute.
 */
export class MemoryRateLimitRepository extends RateLimitStore implements OnModuleDestroy {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    sweepEveryMs = 60_000,
  ) {
    super();
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<RateLimitCount> {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || (window.endsAt <= now && window.blockedUntil <= now)) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(key, window);
    } else if (window.endsAt <= now) {
      window.hits = 0;
      window.endsAt = now + ttl;
    }
    window.hits += 1;
    const timeToExpire = seconds(window.endsAt - now);
    if (window.blockedUntil > now) {
      return Promise.resolve({ totalHits: window.hits, timeToExpire, isBlocked: true, timeToBlockExpire: seconds(window.blockedUntil - now) });
    }
    if (window.hits > limit) {
      window.blockedUntil = now + blockDuration;
      return Promise.resolve({ totalHits: window.hits, timeToExpire, isBlocked: true, timeToBlockExpire: seconds(blockDuration) });
    }
    return Promise.resolve({ totalHits: window.hits, timeToExpire, isBlocked: false, timeToBlockExpire: 0 });
  }

  /** Keys counted now (a window or a block still running). */
  get size(): number {
    return this.windows.size;
  }

  sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) {
      if (window.endsAt <= now && window.blockedUntil <= now) this.windows.delete(key);
    }
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
