import type { INestApplication, Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * A rule each route of the controllers carries, read once at start from its decorators (the
 * handler's, then its controller's) and handed to Fastify as the route's config. The request path
 * then reads it from `request.routeOptions.config`, with no reflection per request.
 */
export interface RouteRule<T> {
  /** The key under the route's config. */
  readonly key: string;
  /**
   * The rule, from the route's handler and controller (Reflector.getAllAndOverride, as guards read
   * it); `route` is the controller's instance and method, when the controller is a singleton.
   */
  read(reflector: Reflector, handler: (...args: unknown[]) => unknown, controller: Type<unknown>, route: RouteOf | undefined): T;
  /** Attaches what the rule needs to the route as Fastify registers it (its hooks). */
  attach?(route: RouteOptions, rule: T): void;
}

/** A controller's route method, as the router finds it. */
export interface RouteOf {
  readonly instance: object;
  readonly name: string;
  /** The instance's method (the prototype's, unless replaced). */
  readonly callback: (...args: unknown[]) => unknown;
}

type RouteConfig = Record<string, unknown>;

/**
 * Reads every rule for every route of the application's controllers into the routes' config, and
 * attaches each rule's hooks when the routes are registered. Call before `app.init()`, which
 * registers the routes.
 */
export function installRouteRules(app: INestApplication, fastify: FastifyInstance, rules: readonly RouteRule<unknown>[]): void {
  const reflector = app.get(Reflector);
  const scanner = app.get(MetadataScanner);
  // A rule lives on the handler function: one function that two controllers share (a method both
  // inherit) would carry the rule of whichever was read last, for both. Refused at start.
  const ruledBy = new Map<(...args: unknown[]) => unknown, string>();
  for (const wrapper of app.get(DiscoveryService).getControllers()) {
    const controller = wrapper.metatype as Type<unknown> | undefined;
    if (!controller) continue;
    const prototype = controller.prototype as Record<string, (...args: unknown[]) => unknown>;
    const instance = wrapper.instance as Record<string, (...args: unknown[]) => unknown> | undefined;
    for (const name of scanner.getAllMethodNames(prototype)) {
      // As Nest's router finds them: a method of the prototype with a path is a route, and the
      // route's metadata is copied from the instance's method (the same function, unless replaced).
      const handler = prototype[name];
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const callback = instance?.[name] ?? handler;
      const route = `${controller.name}.${name}`;
      const earlier = ruledBy.get(callback);
      if (earlier !== undefined) throw new Error(`${route} and ${earlier} share one handler function: give each controller a method of its own`);
      ruledBy.set(callback, route);
      const config: RouteConfig = { ...((Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as RouteConfig | undefined) ?? {}) };
      const of = instance !== undefined && wrapper.isDependencyTreeStatic() ? { instance, name, callback } : undefined;
      for (const rule of rules) config[rule.key] = rule.read(reflector, handler, controller, of);
      // Nest copies the method's metadata to the route it registers, and this one into its config.
      Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, config, callback);
    }
  }
  fastify.addHook('onRoute', (route) => {
    const config = route.config as RouteConfig | undefined;
    if (!config) return;
    for (const rule of rules) {
      if (rule.key in config) rule.attach?.(route, config[rule.key]);
    }
  });
}

/** Adds `hook` to a route's own hooks of one kind, after any it has. */
export function addRouteHook<K extends 'preHandler' | 'preSerialization' | 'onSend'>(route: RouteOptions, kind: K, hook: NonNullable<RouteOptions[K]>): void {
  const existing: unknown = route[kind];
  const list: unknown[] = existing === undefined ? [] : Array.isArray(existing) ? (existing as unknown[]) : [existing];
  (route as unknown as Record<string, unknown>)[kind] = [...list, hook];
}
