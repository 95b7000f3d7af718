import type { Type } from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { useContainer } from 'class-validator';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { requireAdminFor, AdminPath } from './auth/http/admin-paths';
import { ApiClientsService } from './auth/domain/api-clients.service';
import { Drain, ShuttingDown } from './common/runtime/drain';
import { isUnder, targetOf } from './common/http/canonical-target';
import { edgeServerOptions, installEdgeHooks } from './common/http/edge';
import { createRequestLogDestination, createRequestLogger, createServiceLogger, installRequestLog, ServiceLogger } from './common/runtime/logging';
import { installSecurityHeaders } from './common/http/security-headers';
import { noteArrival, recordOf, runWithRecord } from './common/domain/request-record';
import { REQUEST_ID_HEADER, requestIdFor } from './common/http/request-id';
import { corsOrigins, operationalAccess } from './config/env.schema';
import { AppConfig } from './config/load-config';
import { PrometheusMetrics } from './metrics/prometheus.metrics';
import { isLimited, RateLimiter } from './rate-limit/rate-limiter';
import { serveMetrics } from './metrics/metrics.routes';
import { DatabaseUrls } from './database/database-roles';
import { setupSwagger } from './swagger';
import { UpstreamSettings } from './upstream/upstream.settings';

/**
 * Builds the application exactly as production runs it — adapter, hooks, global pipe, filter and
 * interceptor, Swagger — so tests exercise the real thing. Does not listen.
 */
export async function createApp(
  config: AppConfig,
  database: DatabaseUrls,
  upstream: UpstreamSettings,
  options: { logStream?: DestinationStream; demoCustomerId?: () => string | undefined } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    ...edgeServerOptions({
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    // While draining, new requests get our own 503 envelope (see Drain), not Fastify's.
    return503OnClosing: false,
    bodyLimit: config.BODY_LIMIT_BYTES,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ config, database, upstream }), adapter, {
    bufferLogs: true,
    abortOnError: false,
    // Fastify's own JSON parser only (with bodyLimit): no urlencoded parser, so a form is a 415.
    bodyParser: false,
  });
  // stdout in production (main.ts passes the asynchronous destination it flushes on exit), a
  // capture in tests.
  const logStream = options.logStream ?? createRequestLogDestination();
  const logger = createServiceLogger(config.LOG_LEVEL, logStream);
  app.useLogger(new ServiceLogger(logger));
  // Constraints that need the Clock (the expiry rule, past dates) come from Nest's container;
  // class-validator's own come from its default container. Not `app` itself: the application
  // logs every failed lookup at error level, and most lookups are class-validator's own classes.
  // Answers are kept: a failed lookup throws, and validation asks for every constraint every time.
  const moduleRef = app.get(ModuleRef);
  const known = new Map<Type, unknown>();
  useContainer(
    {
      get: (type: Type) => {
        if (!known.has(type)) {
          try {
            known.set(type, moduleRef.get<unknown, unknown>(type, { strict: false }));
          } catch {
            known.set(type, undefined);
          }
        }
        return known.get(type);
      },
    },
    { fallback: true },
  );
  const fastify = app.getHttpAdapter().getInstance();
  // JSON only: without this Fastify would parse text/plain, and such a body must be a 415.
  fastify.removeContentTypeParser('text/plain');
  // The request's record is visible to code far from the controller (the provider client forwards
  // the request id and notes what the provider said; the audit reads both): every later hook, the
  // body parser and the handler run inside it.
  fastify.addHook('onRequest', (request, reply, done) => {
    noteArrival(request.raw, request.ip);
    void reply.header(REQUEST_ID_HEADER, request.id);
    runWithRecord(recordOf(request.raw), done);
  });
  // First, so that every answer carries them, the edge's refusals included.
  installSecurityHeaders(fastify, {
    // Swagger UI's stylesheet sets inline styles; nothing is loaded from other origins, and no
    // upgrade-insecure-requests, so the UI also works over plain HTTP on a developer's machine.
    contentSecurityPolicy: {
      useDefaults: true,
      directives: { 'upgrade-insecure-requests': null, 'style-src': ["'self'", "'unsafe-inline'"] },
    },
  });
  installEdgeHooks(fastify);
  installRequestLog(fastify, createRequestLogger(config.LOG_LEVEL, logStream));

  const drain = app.get(Drain);
  const leaveDrain = new WeakMap<object, () => void>();
  fastify.addHook('onRequest', async (request, reply) => {
    if (drain.isDraining && !isUnder('/health', targetOf(request.raw).path)) {
      void reply.header('connection', 'close');
      throw new ShuttingDown();
    }
    leaveDrain.set(request, drain.enter());
  });
  // A request is done when its answer is ready, even if its caller has gone: the work behind a
  // closed connection (a provider call, its audit event) still finishes before the pool closes.
  fastify.addHook('onSend', (request, _reply, payload, done) => {
    leaveDrain.get(request)?.();
    done(null, payload);
  });

  const origins = corsOrigins(config);
  if (origins.length > 0) {
    app.enableCors({
      origin: origins,
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'Idempotent-Replayed', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
      maxAge: 600,
    });
  }

  const access = operationalAccess(config);
  const adminPaths: AdminPath[] = [];
  if (config.DOCS_ENABLED && access.docs === 'admin') adminPaths.push({ prefix: '/docs', challenge: 'basic' });
  if (config.METRICS_ENABLED && access.metrics === 'admin') adminPaths.push({ prefix: '/metrics', challenge: 'bearer' });
  requireAdminFor(fastify, adminPaths, app.get(ApiClientsService));
  // Every API request, and every request that matches no route, counts against the limits before
  // anything else is done for it; health probes, the docs and the metrics are not counted.
  const limiter = app.get(RateLimiter);
  fastify.addHook('onRequest', async (request, reply) => {
    if (isLimited(request.routeOptions.url)) await limiter.admit(request, reply);
  });
  if (config.METRICS_ENABLED) serveMetrics(fastify, app.get(PrometheusMetrics));
  if (config.DOCS_ENABLED) setupSwagger(app, options.demoCustomerId);
  await app.init();
  return app;
}

/**
 * Stops the application the way a load balancer wants: readiness and new requests answer 503
 * while the requests in flight finish (their audit events included), for at most `graceMs`. Then
 * the connections still open are closed, and the work behind them gets up to `settleMs` more to
 * finish and record its outcome (a provider call is bounded by its own timeout). Then the
 * application (pool, timers) shuts down. Resolves with the number of connections cut.
 */
export async function drainAndClose(app: NestFastifyApplication, graceMs: number, settleMs: number): Promise<{ cut: number; unsettled: number }> {
  const drain = app.get(Drain);
  drain.begin();
  let cut = 0;
  if (!(await drain.whenIdle(graceMs))) {
    cut = drain.requestsInFlight;
    app.getHttpServer().closeAllConnections();
    await drain.whenIdle(settleMs);
  }
  const unsettled = drain.requestsInFlight;
  await app.close();
  return { cut, unsettled };
}
