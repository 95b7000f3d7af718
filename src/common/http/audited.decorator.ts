import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import type { AuditOperation } from '../domain/audit-operations';
import type { RoutePolicy } from './rate-limit-policy';

/** What a route's Fastify config holds (`request.routeOptions.config`), for the edge, which reads it before any handler. */
interface AuditRouteConfig {
  readonly auditOperation?: AuditOperation;
  readonly rateLimitPolicy?: RoutePolicy;
  readonly receipt?: boolean;
}

/** What a route says besides its operation. */
export interface AuditedOptions {
  /** Its calls also count in this budget of their own (the rate-limit stage reads it). */
  readonly rateLimitPolicy?: RoutePolicy;
  /** A write whose answers carry its receipt (Audit-Receipt), when a partner or one of its end users made it. */
  readonly receipt?: boolean;
}

/**
 * The operation a route's audit events are filed under (every /api/v1 route declares one), the
 * rate-limit budget of its own its calls also count in, and whether its answers carry a receipt.
 * Nest's RouteConfig, which keeps one config per route: so all are said here, once.
 */
export const Audited = (operation: AuditOperation, options: AuditedOptions = {}) =>
  RouteConfig({ auditOperation: operation, ...options } satisfies AuditRouteConfig);

export function auditOperationOf(request: FastifyRequest): AuditOperation | undefined {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.auditOperation;
}

/** Whether the route's answers carry their write's receipt. */
export function isReceipted(request: FastifyRequest): boolean {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.receipt === true;
}

/** The route's own budget, when it has one (the rate-limit stage reads it). */
export function routePolicyOf(request: FastifyRequest): RoutePolicy | undefined {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.rateLimitPolicy;
}
