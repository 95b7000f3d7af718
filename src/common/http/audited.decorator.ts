import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import type { AuditOperation } from '../domain/audit-operations';
import type { RoutePolicy } from './rate-limit-policy';

/** What a route's Fastify config holds (`request.routeOptions.config`), for the edge, which reads it before any handler. */
interface AuditRouteConfig {
  readonly auditOperation?: AuditOperation;
  readonly rateLimitPolicy?: RoutePolicy;
}

/**
 * The operation a route's audit events are filed under (every /api/v1 route declares one), and the
 * rate-limit budget of its own its calls also count in, when it has one. Nest's RouteConfig, which
 * keeps one config per route: so both are said here, once.
 */
export const Audited = (operation: AuditOperation, options: { readonly rateLimitPolicy?: RoutePolicy } = {}) =>
  RouteConfig({ auditOperation: operation, ...options } satisfies AuditRouteConfig);

export function auditOperationOf(request: FastifyRequest): AuditOperation | undefined {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.auditOperation;
}

/** The route's own budget, when it has one (the rate-limit stage reads it). */
export function routePolicyOf(request: FastifyRequest): RoutePolicy | undefined {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.rateLimitPolicy;
}
