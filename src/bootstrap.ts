import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { SESSION_PATHS } from './auth/domain/session-endpoints';
import { StaffDocsLogin } from './auth/http/staff-docs-login';
import { edgeServerOptions, installEdgeServer } from './common/http/edge';
import { useFormBodyOn } from './common/http/json-body';
import { installPipeline } from './common/http/pipeline';
import { installAnswer } from './common/http/answer';
import { RequestRecorder } from './common/http/request-recorder.port';
import { requestIdOf } from './common/http/request-context';
import { rememberValidationRules, resolveConstraintsFrom } from './common/http/validation';
import { Drain } from './common/runtime/drain';
import { createRequestLogDestination, createServiceLogger, ServiceLogger } from './common/runtime/logging';
import { GatewayConfig } from './config/gateway-config';
import { API_VERSION_HEADER } from './common/domain/api-versions';
import { trustProxyOption } from './config/trusted-proxies';
import { DatabaseUrls } from './database/database-roles';
import { edgeStages } from './edge.pipeline';
import { serveMetrics } from './metrics/metrics.routes';
import { PrometheusMetrics } from './metrics/prometheus.metrics';
import { DemoResources, setupSwagger } from './swagger';
import { UpstreamSettings } from './upstream/upstream.settings';

export interface AppOptions {
  /** Where request log lines go: stdout in production (the entry point flushes it on exit), a capture in tests. */
  readonly logStream?: DestinationStream;
  /** In sandbox mode, the demo customer and its account: Swagger UI's examples name them. */
  readonly demo?: () => DemoResources | undefined;
  /** Routes development tooling serves beside the service (the reference web app). */
  readonly routes?: (fastify: FastifyInstance) => void;
}

/**
 * Builds the application exactly as production runs it, so tests exercise the real thing: Nest on
 * Fastify (its guard, filter and pipe are AppModule's), the edge's stages before the routes, the
 * answer's hooks after them, CORS, /metrics and Swagger UI as configured. Does not listen.
 */
export async function createApp(
  config: GatewayConfig,
  database: DatabaseUrls,
  upstream: UpstreamSettings,
  options: AppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ config, database, upstream }), new FastifyAdapter(serverOptions(config)), {
    bufferLogs: true,
    abortOnError: false,
    // Fastify's own JSON parser only (with bodyLimit): a form is a 415, except the back-channel logout's (useFormBodyOn).
    bodyParser: false,
  });
  const logStream = options.logStream ?? createRequestLogDestination();
  useServiceLogger(app, config, logStream);
  resolveConstraintsFrom(app);
  rememberValidationRules();
  const fastify = app.getHttpAdapter().getInstance();
  installEdgeServer(fastify, config.errorDocs);
  useFormBodyOn(fastify, [SESSION_PATHS.backchannelLogout]);
  app.get(StaffDocsLogin, { strict: false })?.install(fastify);
  // The answer's hooks first: a success it records as it is sent is recorded before the edge's stages let go of the request (the drain's count).
  installAnswer(fastify, app.get(RequestRecorder, { strict: false }));
  installPipeline(fastify, edgeStages(app, config, logStream));
  if (config.corsOrigins.length > 0) useCors(app, config.corsOrigins);
  if (config.settings.METRICS_ENABLED) serveMetrics(fastify, app.get(PrometheusMetrics));
  options.routes?.(fastify);
  if (config.settings.DOCS_ENABLED) setupSwagger(app, config, options.demo);
  await app.init();
  return app;
}

/** Fastify's options: the edge in front of the router, the trusted proxies, the body limit. */
function serverOptions(config: GatewayConfig): FastifyServerOptions {
  const { settings } = config;
  return {
    ...edgeServerOptions(
      {
        requestTimeoutMs: settings.REQUEST_TIMEOUT_MS,
        headersTimeoutMs: settings.HEADERS_TIMEOUT_MS,
        keepAliveTimeoutMs: settings.KEEP_ALIVE_TIMEOUT_MS,
      },
      config.errorDocs,
    ),
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: trustProxyOption(config.trustedProxies),
    // While draining, new requests get our own 503 envelope (see Drain), not Fastify's.
    return503OnClosing: false,
    bodyLimit: settings.BODY_LIMIT_BYTES,
  };
}

/** Nest's log lines as the service's JSON lines, on the request log's stream. */
function useServiceLogger(app: NestFastifyApplication, config: GatewayConfig, logStream: DestinationStream): void {
  const logger = createServiceLogger(config.settings.LOG_LEVEL, logStream);
  app.useLogger(new ServiceLogger(logger));
  if (config.trustedProxies.kind === 'every-hop') {
    logger.warn('TRUST_PROXY=true trusts every hop: a caller chooses its own address with X-Forwarded-For (refused in production)');
  }
}

/** @fastify/cors, registered by Nest: its hook runs after the edge's stages. */
function useCors(app: NestFastifyApplication, origins: readonly string[]): void {
  app.enableCors({
    origin: [...origins],
    methods: ['GET', 'POST'],
    // A web app on an allowed origin sends the session cookie (credentials) with the anti-forgery header.
    credentials: true,
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'DPoP', 'X-CSRF', API_VERSION_HEADER],
    exposedHeaders: [
      'X-Request-Id',
      API_VERSION_HEADER,
      'Retry-After',
      'Idempotent-Replayed',
      'Audit-Receipt',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ],
    maxAge: 600,
  });
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
