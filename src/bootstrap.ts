import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { Drain } from './common/runtime/drain';
import { edgeServerOptions, installEdgeServer } from './common/http/edge';
import { installPipeline } from './common/http/pipeline';
import { RequestRecorder } from './common/http/request-recorder.port';
import { useFormBodyOn } from './common/http/json-body';
import { SESSION_PATHS } from './auth/domain/session-endpoints';
import { createRequestLogDestination, createServiceLogger, ServiceLogger } from './common/runtime/logging';
import { requestIdOf } from './common/http/request-context';
import { rememberValidationRules, resolveConstraintsFrom } from './common/http/validation';
import { corsOrigins } from './config/env.schema';
import { AppConfig } from './config/load-config';
import { readTrustedProxies, trustProxyOption } from './config/trusted-proxies';
import { PrometheusMetrics } from './metrics/prometheus.metrics';
import { serveMetrics } from './metrics/metrics.routes';
import { DatabaseUrls } from './database/database-roles';
import { edgeStages } from './edge.pipeline';
import { setupSwagger } from './swagger';
import type { FastifyInstance } from 'fastify';
import { loadPreviousSessionKeys, loadSessionKey, trustedIssuers } from './config/end-user-settings';
import { type StaffProvider, staffProvider } from './config/staff-settings';
import { operationalAccess } from './config/env.schema';
import { AccessTokens } from './auth/domain/access-tokens.port';
import { StaffDocsLogin } from './auth/http/staff-docs-login';
import { IssuerDirectory } from './auth/oidc/issuer-metadata';
import { JoseSealedBox } from './auth/oidc/jose-sealed-box';
import { OpenIdRelyingParty } from './auth/oidc/openid-relying-party';
import { StaffPolicy } from './auth/domain/staff';
import { UpstreamSettings } from './upstream/upstream.settings';

/**
 * What development tooling (dev/) adds to the application it starts: its OpenID provider, trusted
 * beside the configured issuers, with the clients the gateway and Swagger UI use there, and routes
 * of its own (the reference web app). Production passes none.
 */
export interface DevelopmentAdditions {
  readonly identityProvider?: {
    readonly issuer: string;
    readonly webClient: { readonly clientId: string; readonly secret: string };
    readonly swaggerClientId: string;
  };
  /** The development staff provider (the company's provider's stand-in): its issuer and Swagger UI's client there. */
  readonly staffProvider?: { readonly issuer: string; readonly swaggerClientId: string };
  readonly routes?: (fastify: FastifyInstance) => void;
}

export interface AppOptions {
  readonly logStream?: DestinationStream;
  readonly demoCustomerId?: () => string | undefined;
  readonly development?: DevelopmentAdditions;
}

/**
 * Builds the application exactly as production runs it — adapter, hooks, global pipe, filter and
 * interceptor, Swagger — so tests exercise the real thing. Does not listen.
 */
export async function createApp(
  config: AppConfig,
  database: DatabaseUrls,
  upstream: UpstreamSettings,
  options: AppOptions = {},
): Promise<NestFastifyApplication> {
  const trustedProxies = readTrustedProxies(config.TRUST_PROXY, config);
  const adapter = new FastifyAdapter({
    ...edgeServerOptions({
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: trustProxyOption(trustedProxies),
    // While draining, new requests get our own 503 envelope (see Drain), not Fastify's.
    return503OnClosing: false,
    bodyLimit: config.BODY_LIMIT_BYTES,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({
      config,
      database,
      upstream,
      devIssuer: options.development?.identityProvider?.issuer,
      devWebClient: options.development?.identityProvider?.webClient,
      devStaff: options.development?.staffProvider,
    }),
    adapter,
    {
      bufferLogs: true,
      abortOnError: false,
      // Fastify's own JSON parser only (with bodyLimit): a form is a 415, except the back-channel logout's (useFormBodyOn).
      bodyParser: false,
    },
  );
  // stdout in production (main.ts passes the asynchronous destination it flushes on exit), a
  // capture in tests.
  const logStream = options.logStream ?? createRequestLogDestination();
  const logger = createServiceLogger(config.LOG_LEVEL, logStream);
  app.useLogger(new ServiceLogger(logger));
  if (trustedProxies.kind === 'every-hop') {
    logger.warn('TRUST_PROXY=true trusts every hop: a caller chooses its own address with X-Forwarded-For (refused in production)');
  }
  resolveConstraintsFrom(app);
  rememberValidationRules();
  const fastify = app.getHttpAdapter().getInstance();
  installEdgeServer(fastify);
  useFormBodyOn(fastify, [SESSION_PATHS.backchannelLogout]);
  const issuers = trustedIssuers(config, options.development?.identityProvider?.issuer);
  const staff = staffProvider(config, options.development?.staffProvider);
  // Swagger UI's logins fetch from the providers' origins (the CSP's connect-src names them, and nothing else).
  const providerOrigins = [...issuers.map(({ issuer }) => issuer), ...(staff ? [staff.issuer] : [])].map((issuer) => new URL(issuer).origin);
  const staffLogin = staffDocsLogin(app, config, staff);
  staffLogin?.install(fastify);
  installPipeline(fastify, edgeStages(app, config, logStream, [...new Set(providerOrigins)], staffLogin, recorderOf(app)));

  const origins = corsOrigins(config);
  if (origins.length > 0) {
    // @fastify/cors, registered by Nest: its hook runs after the edge's stages.
    app.enableCors({
      origin: origins,
      methods: ['GET', 'POST'],
      // A web app on an allowed origin sends the session cookie (credentials) with the anti-forgery header.
      credentials: true,
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'DPoP', 'X-CSRF'],
      exposedHeaders: [
        'X-Request-Id',
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
  if (config.METRICS_ENABLED) serveMetrics(fastify, app.get(PrometheusMetrics));
  options.development?.routes?.(fastify);
  if (config.DOCS_ENABLED) {
    const [issuer] = issuers;
    setupSwagger(app, {
      demoCustomerId: options.demoCustomerId,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      // The development provider's public client for Swagger UI; live mode: typed in Authorize.
      endUsers: issuer && { issuer: issuer.issuer, audience: issuer.audience, clientId: options.development?.identityProvider?.swaggerClientId ?? '' },
      // The staff's login: STAFF_OIDC_CLIENT_ID at STAFF_OIDC_ISSUER, or the development staff provider's client.
      staff: staff && { issuer: staff.issuer, ...(staff.swaggerClientId ? { clientId: staff.swaggerClientId } : {}) },
    });
  }
  await app.init();
  return app;
}

/**
 * Live mode with staff sign-in and Swagger UI's client at the staff provider: /docs opens with the
 * staff's own sign-in (docs/security.md, "Staff"), the sign-in's cookie sealed with the sessions' key.
 */
function staffDocsLogin(app: NestFastifyApplication, config: AppConfig, staff: StaffProvider | undefined): StaffDocsLogin | undefined {
  if (!config.DOCS_ENABLED || operationalAccess(config).docs !== 'admin' || !staff?.swaggerClientId) return undefined;
  const { key } = loadSessionKey({ SESSION_KEY: config.SESSION_KEY, DATA_DIR: config.DATA_DIR });
  const origin = () => {
    if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/$/, '');
    const address = app.getHttpServer().address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : config.PORT}`;
  };
  const provider = new OpenIdRelyingParty(
    { issuer: staff.issuer, clientId: staff.swaggerClientId, clientAuth: { none: true } },
    // No resource parameter: the provider's default audience for the client (Entra ID's v2 endpoint refuses one).
    undefined,
    app.get(IssuerDirectory),
    (offered) => ['openid', ...(offered?.includes('profile') ? ['profile'] : [])],
  );
  return new StaffDocsLogin(
    provider,
    app.get(AccessTokens),
    app.get(StaffPolicy),
    new JoseSealedBox(key, loadPreviousSessionKeys(config.SESSION_PREVIOUS_KEYS)),
    origin,
  );
}

/** The audit's recorder, where the application has one. */
function recorderOf(app: NestFastifyApplication): RequestRecorder | undefined {
  try {
    return app.get(RequestRecorder, { strict: false });
  } catch {
    return undefined;
  }
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
