import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { RateLimitEnvironment } from '../config/environment/rate-limit.environment';
import { MemoryRateLimitRepository } from './memory-rate-limit.repository';
import { RateLimiter, RateLimits } from './rate-limiter';
import { RefusalBudget } from './refusal-budget';
import { RateLimitStore } from './rate-limit-store.port';
import { RedisRateLimitRepository } from './redis-rate-limit.repository';

/** The rate limits' settings, read once: the limits, and where the counters live. */
function rateLimitsOf(config: ConfigService<RateLimitEnvironment, true>): RateLimits {
  return {
    ttlMs: 60_000,
    perClient: config.get('RATE_LIMIT_PER_MINUTE', { infer: true }),
    perIp: config.get('RATE_LIMIT_PER_IP_PER_MINUTE', { infer: true }),
    redisUrl: config.get('RATE_LIMIT_REDIS_URL', { infer: true }) || undefined,
    routes: { 'request-log': config.get('RATE_LIMIT_REQUEST_LOG_PER_MINUTE', { infer: true }) },
  };
}

/**
 * Rate limits per client token and per source IP. Counters live in memory, or in Redis when
 * RATE_LIMIT_REDIS_URL is set so that replicas share them. The limiter runs as a stage of the edge
 * (edge.pipeline.ts), after the identify stage, whose answer it counts by.
 */
@Module({
  providers: [
    RateLimiter,
    RefusalBudget,
    { provide: RateLimits, inject: [ConfigService], useFactory: rateLimitsOf },
    {
      provide: RateLimitStore,
      inject: [RateLimits],
      useFactory: async (limits: RateLimits): Promise<RateLimitStore> =>
        limits.redisUrl ? await RedisRateLimitRepository.connect(limits.redisUrl) : new MemoryRateLimitRepository(),
    },
  ],
  exports: [RateLimiter, RefusalBudget],
})
export class RateLimitModule {}
