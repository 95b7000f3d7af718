import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { ApiClientsService } from '../auth/domain/api-clients.service';
import { AuthModule } from '../auth/auth.module';
import { AppConfig } from '../config/load-config';
import { RateLimitGuard, RateLimits, trackerOf } from './rate-limit.guard';
import { RedisThrottlerStorage } from './redis-throttler.storage';

function rateLimitsOf(config: ConfigService<AppConfig, true>): RateLimits {
  return {
    name: 'default',
    ttlMs: 60_000,
    perClient: config.get('RATE_LIMIT_PER_MINUTE', { infer: true }),
    perIp: config.get('RATE_LIMIT_PER_IP_PER_MINUTE', { infer: true }),
  };
}

/**
 * Rate limits per client token and per source IP. Counters live in memory, or in Redis when
 * RATE_LIMIT_REDIS_URL is set so that replicas share them. The guard is registered globally by
 * the application module, ahead of authentication.
 */
@Module({
  imports: [
    AuthModule,
    ThrottlerModule.forRootAsync({
      imports: [AuthModule],
      inject: [ConfigService, ApiClientsService],
      useFactory: (config: ConfigService<AppConfig, true>, clients: ApiClientsService) => {
        const redisUrl = config.get('RATE_LIMIT_REDIS_URL', { infer: true });
        const limits = rateLimitsOf(config);
        return {
          storage: redisUrl ? new RedisThrottlerStorage(redisUrl) : undefined,
          throttlers: [
            {
              name: limits.name,
              ttl: limits.ttlMs,
              limit: async (context) => {
                const tracker = await trackerOf(context.switchToHttp().getRequest<FastifyRequest>(), clients);
                return tracker.per === 'client' ? limits.perClient : limits.perIp;
              },
            },
          ],
        };
      },
    }),
  ],
  providers: [RateLimitGuard, { provide: RateLimits, inject: [ConfigService], useFactory: rateLimitsOf }],
  exports: [RateLimitGuard],
})
export class RateLimitModule {}
