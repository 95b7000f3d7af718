import { Injectable } from '@nestjs/common';
import { ROUTE_POLICIES, type RoutePolicy } from '../common/http/rate-limit-policy';
import { routePolicyOf } from '../common/http/audited.decorator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EdgeStage } from '../common/http/edge-stage';
import { contextOf } from '../common/http/request-context';
import { RateLimitStore } from './rate-limit-store.port';
import { RateLimited } from './rate-limited.error';

/** The limits, per minute, as configured (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_PER_IP_PER_MINUTE), and RATE_LIMIT_REDIS_URL when set. */
export abstract class RateLimits {
  abstract readonly ttlMs: number;
  abstract readonly perClient: number;
  abstract readonly perIp: number;
  /** Counters shared by the replicas in this Redis; in memory when unset. */
  abstract readonly redisUrl?: string;
  /** Each route policy's quota per window (RATE_LIMIT_REQUEST_LOG_PER_MINUTE), counted on top of the caller's. */
  abstract readonly routes: Readonly<Record<RoutePolicy, number>>;
}

export interface Tracker {
  readonly key: string;
  readonly per: 'client' | 'ip' | 'identity-provider';
}

/**
 * Whom a request counts against, as the identify stage decided: its caller when its credentials
 * were accepted; the OpenID provider's back-channel logout, per address, in a budget of its own
 * (its calls are proven by their signed token, and anonymous traffic from the same address must
 * not use it up); else its source IP (so guessing tokens is limited too).
 */
export function trackerOf(request: FastifyRequest): Tracker {
  const identity = contextOf(request.raw).identity;
  if (identity?.caller) return { key: `client:${identity.caller.id}`, per: 'client' };
  if (identity?.fromIdentityProvider) return { key: `identity-provider:${request.ip}`, per: 'identity-provider' };
  return { key: `ip:${request.ip}`, per: 'ip' };
}

/** The policies' names in RateLimit-Policy and RateLimit: one per kind of tracker. */
const POLICY_NAMES = { client: 'per-client', ip: 'per-ip', 'identity-provider': 'identity-provider' } as const;

/**
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers, a Structured Field list): the policy
 * that applies to this request, its quota `q` of requests per window `w` seconds.
 */
export function rateLimitPolicy(name: string, quota: number, windowSeconds: number): string {
  return `"${name}";q=${quota};w=${windowSeconds}`;
}

/** `RateLimit`: what is left of the policy's quota `r`, and the seconds `t` until the window resets. */
export function rateLimitState(name: string, remaining: number, resetSeconds: number): string {
  return `"${name}";r=${remaining};t=${Math.max(0, Math.ceil(resetSeconds))}`;
}

/** Routes that are limited: the API, and whatever matches no route (scanning is limited too). */
export function isLimited(route: string | undefined): boolean {
  return route === undefined || route.startsWith('/api/');
}

/**
 * Counts every request to the API, per client or per IP, across every route, in one window per
 * minute; answers over the limit with the envelope's 429 and Retry-After, and every counted
 * request with X-RateLimit-Limit, -Remaining and -Reset, and the IETF draft's RateLimit-Policy and
 * RateLimit (the 429 too). Runs as an onRequest hook (see
 * the edge's rate-limit stage), before the body is read: a caller over its limit costs no more than that.
 */
@Injectable()
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly limits: RateLimits,
  ) {}

  /** @throws RateLimited over the limit. */
  async admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const tracker = trackerOf(request);
    const windowSeconds = Math.ceil(this.limits.ttlMs / 1000);
    // A route's own budget first: a call it refuses does not use up the caller's.
    const route = routePolicyOf(request);
    const routed = route === undefined ? undefined : await this.admitRoute(route, tracker, windowSeconds, reply);
    // The OpenID provider's logouts are counted as a client's: a provider ending many sessions at once is not guessing.
    const limit = tracker.per === 'ip' ? this.limits.perIp : this.limits.perClient;
    const count = await this.store.increment(tracker.key, this.limits.ttlMs, limit, this.limits.ttlMs);
    const policy = POLICY_NAMES[tracker.per];
    if (count.isBlocked) {
      // The refusal says the policy too, with nothing left until Retry-After.
      void reply.headers({ 'ratelimit-policy': rateLimitPolicy(policy, limit, windowSeconds), ratelimit: rateLimitState(policy, 0, count.timeToBlockExpire) });
      throw new RateLimited(count.timeToBlockExpire, limit, tracker.per);
    }
    const remaining = Math.max(0, limit - count.totalHits);
    if (routed === undefined) {
      void reply.headers({
        'x-ratelimit-limit': limit,
        'x-ratelimit-remaining': remaining,
        'x-ratelimit-reset': count.timeToExpire,
        'ratelimit-policy': rateLimitPolicy(policy, limit, windowSeconds),
        ratelimit: rateLimitState(policy, remaining, count.timeToExpire),
      });
      return;
    }
    // Both policies (a Structured Field list, the caller's first); the X-RateLimit headers, the one nearer its end.
    const nearer = routed.remaining < remaining ? routed : { limit, remaining, resetSeconds: count.timeToExpire };
    void reply.headers({
      'x-ratelimit-limit': nearer.limit,
      'x-ratelimit-remaining': nearer.remaining,
      'x-ratelimit-reset': nearer.resetSeconds,
      'ratelimit-policy': `${rateLimitPolicy(policy, limit, windowSeconds)}, ${rateLimitPolicy(routed.route, routed.limit, windowSeconds)}`,
      ratelimit: `${rateLimitState(policy, remaining, count.timeToExpire)}, ${rateLimitState(routed.route, routed.remaining, routed.resetSeconds)}`,
    });
  }

  /**
   * A route with a budget of its own, per caller: counted there.
   * @throws RateLimited naming the route's policy, over its budget.
   */
  private async admitRoute(
    route: RoutePolicy,
    tracker: Tracker,
    windowSeconds: number,
    reply: FastifyReply,
  ): Promise<{ route: RoutePolicy; limit: number; remaining: number; resetSeconds: number }> {
    const limit = this.limits.routes[route];
    const count = await this.store.increment(`${route}:${tracker.key}`, this.limits.ttlMs, limit, this.limits.ttlMs);
    if (count.isBlocked) {
      void reply.headers({ 'ratelimit-policy': rateLimitPolicy(route, limit, windowSeconds), ratelimit: rateLimitState(route, 0, count.timeToBlockExpire) });
      throw new RateLimited(count.timeToBlockExpire, limit, tracker.per, ROUTE_POLICIES[route]);
    }
    return { route, limit, remaining: Math.max(0, limit - count.totalHits), resetSeconds: count.timeToExpire };
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
