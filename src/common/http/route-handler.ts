import { RequestMethod, type ArgumentMetadata, type INestApplication, type PipeTransform, type Type } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PARAMTYPES_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  RENDER_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApplicationConfig } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { RouteOf, RouteRule } from './route-rules';

/** A route's handler as Fastify runs it: the controller's method, its arguments made and piped as Nest makes them. */
export type DirectHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** One argument of a handler: where its value comes from, and the pipes it goes through. */
interface Argument {
  readonly index: number;
  readonly value: (request: FastifyRequest, reply: FastifyReply) => unknown;
  /** The request and the reply are passed as they are (Nest's pipes never see them; a reply is itself thenable). */
  readonly pipeable: boolean;
  readonly pipes: readonly PipeTransform[];
  readonly metadata: ArgumentMetadata;
}

/** Nest's own argument metadata, as its parameter decorators store it (`${type}:${index}`, a custom one's key ends so). */
interface StoredArgument {
  readonly index: number;
  readonly data?: string;
  readonly pipes?: readonly unknown[];
  readonly factory?: (data: unknown, context: ExecutionContextHost) => unknown;
}

const PIPED: Partial<Record<RouteParamtypes, ArgumentMetadata['type']>> = {
  [RouteParamtypes.BODY]: 'body',
  [RouteParamtypes.QUERY]: 'query',
  [RouteParamtypes.PARAM]: 'param',
};

/** A path of plain segments and `:name` parameters: the router reads it as Nest's own matcher does, so Nest adds no check of its own. */
const PLAIN_PATH = /^(\/([\w.~-]+|:\w+))+\/?$/;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';

/**
 * Each controller route's handler, run by Fastify itself (docs/architecture.md, "Nest composes, the
 * edge runs"): read once at start from the same metadata Nest's router reads (the parameter
 * decorators, the design types, `@HttpCode`), it makes the arguments, runs them through the
 * global pipes as Nest does (the validation pipe), calls the controller's method and hands the
 * result to Nest's own reply. A failure is thrown to Fastify's error handler, which is Nest's,
 * and so the one error filter. What a request then skips is Nest's router context: its
 * per-request promises, argument arrays and execution contexts (docs/benchmarks.md).
 *
 * A route that uses what this does not make (a guard, an interceptor, a route or parameter pipe, a
 * filter of its own, `@Res` without `passthrough`, `@Headers`, `@Next`, a redirect, a template,
 * server-sent events, a request-scoped controller) keeps Nest's router, as does a request with an
 * empty path parameter (which Nest answers as not found).
 */
export function directHandlerRule(app: INestApplication): RouteRule<DirectHandler | undefined> {
  const config = app.get(ApplicationConfig, { strict: false });
  const adapter = app.getHttpAdapter();
  const enhanced =
    config.getGlobalGuards().length > 0 ||
    config.getGlobalInterceptors().length > 0 ||
    config.getGlobalRequestGuards().length > 0 ||
    config.getGlobalRequestInterceptors().length > 0 ||
    config.getGlobalRequestPipes().length > 0;
  return {
    key: 'directHandler',
    read: (_reflector, handler, controller, route) => {
      if (enhanced || !route?.instance) return undefined;
      return compile(handler, controller, route, config.getGlobalPipes(), (reply, result) => adapter.reply(reply, result));
    },
    attach: (route, direct) => {
      if (direct === undefined || typeof route.url !== 'string' || !PLAIN_PATH.test(route.url)) return;
      const nest = route.handler;
      const handler: RouteHandlerMethod = function (request, reply) {
        const params = request.params as Record<string, string> | undefined;
        for (const name in params) {
          if (params[name] === '') return nest.call(this, request, reply);
        }
        return direct(request, reply);
      };
      route.handler = handler;
    },
  };
}

function compile(
  handler: (...args: unknown[]) => unknown,
  controller: Type<unknown>,
  { instance, name, callback }: RouteOf,
  globalPipes: readonly PipeTransform[],
  send: (reply: FastifyReply, result: unknown) => unknown,
): DirectHandler | undefined {
  for (const key of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    if (hasAny(Reflect.getMetadata(key, handler)) || hasAny(Reflect.getMetadata(key, controller))) return undefined;
  }
  for (const key of [REDIRECT_METADATA, RENDER_METADATA, SSE_METADATA]) {
    if (Reflect.getMetadata(key, handler) !== undefined) return undefined;
  }
  const headers = (Reflect.getMetadata(HEADERS_METADATA, handler) ?? []) as readonly { name: string; value: string | (() => string) }[];
  const passthrough = Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, name) === true;
  const stored = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, StoredArgument>;
  const types = (Reflect.getMetadata(PARAMTYPES_METADATA, controller.prototype as object, name) ?? []) as unknown[];
  const args: Argument[] = [];
  for (const [key, argument] of Object.entries(stored)) {
    if (hasAny(argument.pipes)) return undefined;
    const metatype = types[argument.index] as Type<unknown> | undefined;
    const data = argument.data;
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA)) {
      const factory = argument.factory;
      if (typeof factory !== 'function') return undefined;
      args.push({
        index: argument.index,
        value: (request, reply) => factory(data, new ExecutionContextHost([request, reply, undefined], controller, handler)),
        pipeable: true,
        pipes: globalPipes,
        metadata: { type: 'custom', metatype, data },
      });
      continue;
    }
    const type = Number(key.split(':')[0]) as RouteParamtypes;
    if (type === RouteParamtypes.REQUEST || (type === RouteParamtypes.RESPONSE && passthrough)) {
      const value = type === RouteParamtypes.REQUEST ? (request: FastifyRequest) => request : (_: FastifyRequest, reply: FastifyReply) => reply;
      args.push({ index: argument.index, value, pipeable: false, pipes: [], metadata: { type: 'custom', metatype, data } });
      continue;
    }
    const piped = PIPED[type];
    if (piped === undefined) return undefined;
    const from =
      type === RouteParamtypes.BODY
        ? (request: FastifyRequest) => request.body as Record<string, unknown> | undefined
        : type === RouteParamtypes.QUERY
          ? (request: FastifyRequest) => request.query as Record<string, unknown> | undefined
          : (request: FastifyRequest) => request.params as Record<string, unknown> | undefined;
    args.push({
      index: argument.index,
      value: data === undefined ? from : (request) => from(request)?.[data],
      pipeable: true,
      pipes: globalPipes,
      metadata: { type: piped, metatype, data },
    });
  }
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
  const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === RequestMethod.POST ? 201 : 200);
  const length = Math.max(0, ...args.map((argument) => argument.index + 1));
  // As Nest's router runs them: every argument's value is taken in the order the decorators stored
  // them, and the piped ones settle together (Promise.all), so that the first error is Nest's.
  const piped = async (values: unknown[], argument: Argument, value: unknown) => {
    let result = isThenable(value) ? await value : value;
    for (const pipe of argument.pipes) result = await pipe.transform(result, argument.metadata);
    values[argument.index] = result;
  };
  return async (request, reply) => {
    void reply.code(status);
    for (const { name: header, value } of headers) void reply.header(header, typeof value === 'function' ? value() : value);
    const values: unknown[] = new Array(length).fill(undefined);
    let pending: Promise<void>[] | undefined;
    for (const argument of args) {
      try {
        const value = argument.value(request, reply);
        if (argument.pipeable && (argument.pipes.length > 0 || isThenable(value))) (pending ??= []).push(piped(values, argument, value));
        else values[argument.index] = value;
      } catch (error) {
        (pending ??= []).push(Promise.reject(error instanceof Error ? error : new Error(String(error))));
      }
    }
    if (pending) await Promise.all(pending);
    const result = await callback.apply(instance, values);
    // The status as the handler left it: Nest sets the route's before the handler, never after.
    send(reply, result);
    return reply;
  };
}

function hasAny(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}
