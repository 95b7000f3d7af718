import type { FastifyRequest } from 'fastify';
import { AddRouteConfig } from './route-config';

/**
 * Routes whose calls also count in a budget of their own, per caller, on top of the caller's: each
 * read of a partner's request log is a query of the audit log.
 */
export const ROUTE_POLICIES = { 'request-log': 'reads of the request log' } as const;
export type RoutePolicy = keyof typeof ROUTE_POLICIES;

interface RateLimitRouteConfig {
  rateLimitPolicy?: RoutePolicy;
}

/** The route's calls count in `policy`'s budget too. */
export const RateLimitPolicy = (policy: RoutePolicy) => AddRouteConfig({ rateLimitPolicy: policy } satisfies RateLimitRouteConfig);

/** The route's own budget, when it has one (the rate-limit stage reads it). */
export function routePolicyOf(request: FastifyRequest): RoutePolicy | undefined {
  return (request.routeOptions.config as RateLimitRouteConfig | undefined)?.rateLimitPolicy;
}
