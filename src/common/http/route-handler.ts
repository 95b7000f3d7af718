import { RequestMethod, type ArgumentMetadata, type INestApplication, type PipeTransform, type Type } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HOST_METADATA,
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
import { ParamsTokenFactory } from '@nestjs/core/pipes/params-token-factory';
import { RouteParamsFactory } from '@nestjs/core/router/route-params-factory';
import { RouterResponseController } from '@nestjs/core/router/router-response-controller';
import { isStreamingBody } from '@nestjs/core/router/streaming-body';
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

/** The arguments Nest runs pipes on (its router's `isPipeable`), custom decorators' included. */
const PIPEABLE: ReadonlySet<RouteParamtypes> = new Set([
  RouteParamtypes.BODY,
  RouteParamtypes.RAW_BODY,
  RouteParamtypes.QUERY,
  RouteParamtypes.PARAM,
  RouteParamtypes.FILE,
  RouteParamtypes.FILES,
  RouteParamtypes.COOKIES,
  RouteParamtypes.SIGNED_COOKIES,
]);

/**
 * A path of plain segments and `:name` parameters, each name once: the router reads it as Nest's
 * own matcher does, so Nest adds no check of its own beyond empty parameters.
 */
function isPlainPath(url: unknown): boolean {
  if (typeof url !== 'string' || !/^(\/([\w.~-]+|:\w+))+\/?$/.test(url)) return false;
  const names = url.split('/').filter((segment) => segment.startsWith(':'));
  return new Set(names).size === names.length;
}

/** Fastify has no `next`: Nest's router passes its handlers none either. */
const NO_NEXT = undefined as unknown as () => void;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';

/**
 * Each controller route's handler, run by Fastify itself (docs/architecture.md, "Nest composes, the
 * edge runs"): read once at start from the same metadata Nest's router reads (the parameter
 * decorators, the design types, `@HttpCode`, `@Header`), it takes the arguments with Nest's own
 * `RouteParamsFactory`, runs them through the global pipes as Nest does (the validation pipe),
 * calls the controller's method and sends the result with Nest's own `RouterResponseController`
 * (an Observable's last value, a stream as a stream). A failure is thrown to Fastify's error
 * handler, which is Nest's, and so the one error filter. (That handler first maps a Fastify error,
 * or an http-errors one, below 500 to an HttpException, where a route's own would pass it on as it
 * is: no handler or parameter decorator of the service throws either.) What a request then skips is Nest's router
 * context: its per-request promises, argument arrays and execution contexts (docs/benchmarks.md).
 *
 * A route that uses what this does not make (a guard, an interceptor, a route or parameter pipe, a
 * filter of its own, `@Res` without `passthrough`, `@Next`, a redirect, a template, server-sent
 * events, a controller bound to a host, a request-scoped controller, a path whose parameters Nest
 * matches itself) keeps Nest's router, as does a request with an empty path parameter (which Nest
 * answers as not found). Global pipes, guards and interceptors are read when the rule is made, as
 * Nest's router reads them when it registers the routes: call it just before `app.init()`.
 */
export function directHandlerRule(app: INestApplication): RouteRule<DirectHandler | undefined> {
  const config = app.get(ApplicationConfig, { strict: false });
  const enhanced =
    config.getGlobalGuards().length > 0 ||
    config.getGlobalInterceptors().length > 0 ||
    config.getGlobalRequestGuards().length > 0 ||
    config.getGlobalRequestInterceptors().length > 0 ||
    config.getGlobalRequestPipes().length > 0;
  const nest: NestParts = {
    values: new RouteParamsFactory(config),
    tokens: new ParamsTokenFactory(),
    responses: new RouterResponseController(app.getHttpAdapter()),
    pipes: config.getGlobalPipes(),
  };
  return {
    key: 'directHandler',
    read: (_reflector, handler, controller, route) => (enhanced || !route ? undefined : compile(handler, controller, route, nest)),
    attach: (route, direct) => {
      if (direct === undefined || !isPlainPath(route.url)) return;
      const viaNest = route.handler;
      const handler: RouteHandlerMethod = function (request, reply) {
        const params = request.params as Record<string, string> | undefined;
        for (const name in params) {
          if (params[name] === '') return viaNest.call(this, request, reply);
        }
        return direct(request, reply);
      };
      route.handler = handler;
    },
  };
}

/** What the direct handlers borrow from Nest: its argument factory, its pipe metadata's names, its response controller, the global pipes. */
interface NestParts {
  readonly values: RouteParamsFactory;
  readonly tokens: ParamsTokenFactory;
  readonly responses: RouterResponseController;
  readonly pipes: readonly PipeTransform[];
}

function compile(
  handler: (...args: unknown[]) => unknown,
  controller: Type<unknown>,
  { instance, name, callback }: RouteOf,
  nest: NestParts,
): DirectHandler | undefined {
  for (const key of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    if (hasAny(Reflect.getMetadata(key, handler)) || hasAny(Reflect.getMetadata(key, controller))) return undefined;
  }
  for (const key of [REDIRECT_METADATA, RENDER_METADATA, SSE_METADATA]) {
    if (Reflect.getMetadata(key, handler) !== undefined) return undefined;
  }
  if (Reflect.getMetadata(HOST_METADATA, controller) !== undefined) return undefined;
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
        pipes: nest.pipes,
        metadata: { type: 'custom', metatype, data },
      });
      continue;
    }
    const type = Number(key.split(':')[0]) as RouteParamtypes;
    if (type === RouteParamtypes.NEXT || (type === RouteParamtypes.RESPONSE && !passthrough)) return undefined;
    const pipeable = PIPEABLE.has(type);
    args.push({
      index: argument.index,
      value: (request, reply) => nest.values.exchangeKeyForValue(type, data as string, { req: request, res: reply, next: NO_NEXT }),
      pipeable,
      pipes: pipeable ? nest.pipes : [],
      metadata: { type: nest.tokens.exchangeEnumForString(type), metatype, data },
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
        // Passed on as thrown, as Nest's router passes it.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        (pending ??= []).push(Promise.reject(error));
      }
    }
    if (pending) await Promise.all(pending);
    const result: unknown = await nest.responses.transformToResult(callback.apply(instance, values));
    // The status as the handler left it: Nest sets the route's before the handler, never after.
    await (isStreamingBody(result) ? nest.responses.stream(result, reply, request, {}) : nest.responses.apply(result, reply));
    return reply;
  };
}

function hasAny(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}
