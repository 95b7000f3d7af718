import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';

/**
 * Adds `config` to the route's Fastify config (`request.routeOptions.config`). Several decorators
 * each add their part (the audit's operation, a rate-limit policy); Nest's RouteConfig would keep
 * only the last one applied.
 */
export const AddRouteConfig =
  (config: Record<string, unknown>): MethodDecorator =>
  (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const existing = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined) ?? {};
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...existing, ...config }, handler);
    return descriptor;
  };
