import { OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { connectRedis, warnWhileAway } from '../common/runtime/redis-client';
import { RateLimitCount, RateLimitStore } from './rate-limit-store.port';

/**
 * One fixed window per key: the first hit starts a window of `ttl` ms; a hit over `limit` blocks
 * the key for `blockDuration` ms. Atomic in Redis, so every replica counts against one total.
 * Returns [hits, window ms left, blocked 0/1, block ms left].
 */
const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local window = redis.call('PTTL', KEYS[1])
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return { hits, window, 1, blocked } end
if hits > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  return { hits, window, 1, tonumber(ARGV[3]) }
end
return { hits, window, 0, 0 }
`;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Rate-limit counters in Redis, shared by every replica. When Redis does not answer, requests are
 * let through (logged, at most once a minute): an outage of the counter store must not become an
 * outage of the API. Commands fail fast instead of queueing while Redis is away.
 */
export class RedisRateLimitRepository extends RateLimitStore implements OnModuleDestroy {
  private readonly warn: (error: Error) => void;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'partner-gateway:rate:',
  ) {
    super();
    this.warn = warnWhileAway(redis, 'RateLimit', 'Rate-limit store unavailable: requests are not being limited');
  }

  /** Once its first connection is up, or a second has passed (connectRedis). */
  static async connect(url: string, prefix?: string): Promise<RedisRateLimitRepository> {
    return new RedisRateLimitRepository(await connectRedis(url), prefix);
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<RateLimitCount> {
    const base = `${this.prefix}${key}`;
    try {
      const [totalHits, windowMs, blocked, blockMs] = (await this.redis.eval(INCREMENT, 2, base, `${base}:blocked`, ttl, limit, blockDuration)) as number[];
      return {
        totalHits,
        timeToExpire: seconds(windowMs),
        isBlocked: blocked === 1,
        timeToBlockExpire: blocked === 1 ? seconds(blockMs) : 0,
      };
    } catch (error) {
      this.warn(error as Error);
      return { totalHits: 0, timeToExpire: seconds(ttl), isBlocked: false, timeToBlockExpire: 0 };
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
