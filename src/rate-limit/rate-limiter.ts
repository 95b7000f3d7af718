import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CallerIdentity } from '../common/http/caller-identity.port';
import type { EdgeStage } from '../common/http/edge-stage';
import { RateLimitStore } from './rate-limit-store';
import { RateLimited } from './rate-limited.error';

/** The limits, per minute, as configured (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_PER_IP_PER_MINUTE), and RATE_LIMIT_REDIS_URL when set. */
export abstract class RateLimits {
  abstract readonly ttlMs: number;
  abstract readonly perClient: number;
  abstract readonly perIp: number;
  /** Counters shared by the replicas in this Redis; in memory when unset. */
  abstract readonly redisUrl?: string;
}

export interface Tracker {
  readonly key: string;
  readonly per: 'client' | 'ip';
}

/**
 * Whom a request counts against: its client when the token is valid, else its source IP (so
 * guessing tokens is limited too). The token is looked up once per request, and authentication
 * reuses the answer (CallerIdentity).
 */
export async function trackerOf(request: FastifyRequest, identity: CallerIdentity): Promise<Tracker> {
  const clientId = await identity.clientIdOf(request);
  return clientId ? { key: `client:${clientId}`, per: 'client' } : { key: `ip:${request.ip}`, per: 'ip' };
}

/** Routes that are limited: the API, and whatever matches no route (scanning is limited too). */
export function isLimited(route: string | undefined): boolean {
  return route === undefined || route.startsWith('/api/');
}

/**
 * Counts every request to the API, per client or per IP, across every route, in one window per
 * minute; answers over the limit with the envelope's 429 and Retry-After, and every counted
 * request with X-RateLimit-Limit, -Remaining and -Reset. Runs as an onRequest hook (see
 * the edge's rate-limit stage), before the body is read: a caller over its limit costs no more than that.
 */
@Injectable()
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly limits: RateLimits,
    private readonly identity: CallerIdentity,
  ) {}

  /** @throws RateLimited over the limit. */
  async admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const tracker = await trackerOf(request, this.identity);
    const limit = tracker.per === 'client' ? this.limits.perClient : this.limits.perIp;
    const count = await this.store.increment(tracker.key, this.limits.ttlMs, limit, this.limits.ttlMs);
    if (count.isBlocked) throw new RateLimited(count.timeToBlockExpire, limit, tracker.per);
    void reply.headers({
      'x-ratelimit-limit': limit,
      'x-ratelimit-remaining': Math.max(0, limit - count.totalHits),
      'x-ratelimit-reset': count.timeToExpire,
    });
  }
}

/**
 * The rate-limit stage: every API request, and every request that matches no route, counts against
 * the limits before anything else is done for it; health probes, the docs and the metrics are not counted.
 */
export function rateLimitStage(limiter: RateLimiter): EdgeStage {
  return {
    name: 'rate-limit',
    onRequest: (request, reply) => (isLimited(request.routeOptions.url) ? limiter.admit(request, reply) : undefined),
  };
}
