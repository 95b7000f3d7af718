import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { adminPathOf, adminPathsStage, AdminPath, READINESS_DETAILS, tokenDigest } from './auth/http/admin-paths';
import { Authenticator } from './auth/domain/authenticator';
import { BrowserSessions } from './auth/domain/browser-sessions.service';
import { StaffPolicy } from './auth/domain/staff';
import { identifyStage } from './auth/http/identify.stage';
import { targetStage } from './common/http/edge';
import type { EdgeStage } from './common/http/edge-stage';
import { requestContextStage } from './common/http/request-context';
import { securityHeadersStage } from './common/http/security-headers';
import { traceStage } from './common/http/trace-stage';
import { Drain, drainStage } from './common/runtime/drain';
import { createRequestLogger, requestLogStage } from './common/runtime/logging';
import { readMetricsToken } from './config/end-user-settings';
import { GatewayConfig } from './config/gateway-config';
import { StaffDocsLogin } from './auth/http/staff-docs-login';
import { metricsStage } from './metrics/metrics.routes';
import { PrometheusMetrics } from './metrics/prometheus.metrics';
import { Metrics } from './common/domain/metrics.port';
import { OPERATION } from './common/domain/audit-operations';
import { RequestRecorder } from './common/http/request-recorder.port';
import { isLimited, RateLimiter, rateLimitStage } from './rate-limit/rate-limiter';
import { RefusalBudget } from './rate-limit/refusal-budget';

/**
 * The edge, in the order its stages run for every request (docs/architecture.md, "The edge"):
 *
 * 1. request-context — the request's record learns the caller's address; the answer carries the request id.
 * 2. trace — the server span is named by its route; a sampled trace's id goes into the record (when tracing is on).
 * 3. security-headers — on every answer, the edge's refusals included.
 * 4. target — the canonical target and the headers: a refused one is answered here.
 * 5. request-log — one line per request when its answer has gone (or its caller has).
 * 6. drain — while shutting down, new requests are refused; the others are counted in flight.
 * 7. identify — who is calling, decided once: a client token, an end user's access token (bearer or DPoP), a
 *    browser session; the caller or the refusal is kept, and nothing else authenticates a request.
 * 8. admin-paths — Swagger UI, the OpenAPI document and the metrics need an admin (when so configured).
 * 9. rate-limit — API requests and unmatched ones count against the limits, per caller or per address.
 * 10. metrics — the request-duration histogram (when metrics are on).
 *
 * Then Nest's route: the request's scope entered (common/http/pipeline.ts), the access guard (may
 * this caller call it: its @Public, @Roles, @EndUsers and @Staff), the validation pipe, the handler,
 * the answer (Fastify's hook: audit, then envelope) and, for a failure at any point, the error filter.
 */
export const EDGE_STAGE_ORDER = [
  'request-context',
  'trace',
  'security-headers',
  'target',
  'request-log',
  'drain',
  'identify',
  'admin-paths',
  'rate-limit',
  'metrics',
] as const;

type EdgeStageName = (typeof EDGE_STAGE_ORDER)[number];

/** The stages, in EDGE_STAGE_ORDER: each is named there once, and built here under its name. */
export function edgeStages(app: NestFastifyApplication, config: GatewayConfig, logStream: DestinationStream): EdgeStage[] {
  const { settings, access } = config;
  // Live mode with staff sign-in: /docs opens with the staff's own sign-in (StaffDocsLogin).
  const docsSignIn = app.get(StaffDocsLogin, { strict: false }) ?? undefined;
  const adminPaths: AdminPath[] = [READINESS_DETAILS];
  if (settings.DOCS_ENABLED && access.docs === 'admin')
    adminPaths.push({ prefix: '/docs', operation: OPERATION.adminDocs, challenge: 'basic', ...(docsSignIn ? { signIn: docsSignIn } : {}) });
  if (settings.METRICS_ENABLED && access.metrics === 'admin')
    adminPaths.push({ prefix: '/metrics', operation: OPERATION.adminMetrics, challenge: 'bearer', staffRoles: ['operator'] });
  if (settings.METRICS_ENABLED && access.metrics === 'token') {
    adminPaths.push({
      prefix: '/metrics',
      operation: OPERATION.adminMetrics,
      challenge: 'bearer',
      token: tokenDigest(readMetricsToken(settings.METRICS_TOKEN!)),
    });
  }
  // Swagger UI's logins fetch from the trusted OpenID providers' origins (the CSP's connect-src names them, and nothing else).
  const issuerOrigins = [
    ...new Set(
      [...config.issuers.map(({ issuer }) => issuer), ...(config.staffProvider ? [config.staffProvider.issuer] : [])].map((issuer) => new URL(issuer).origin),
    ),
  ];
  const recorder = app.get(RequestRecorder, { strict: false });
  const refusals = app.get(RefusalBudget);
  const breakGlass = app.get(Metrics);
  const stages: Record<EdgeStageName, EdgeStage> = {
    'request-context': requestContextStage(),
    trace: traceStage(),
    'security-headers': securityHeadersStage({
      // Swagger UI's stylesheet sets inline styles; nothing is loaded from other origins, and no
      // upgrade-insecure-requests, so the UI also works over plain HTTP on a developer's machine.
      // Its end-user login fetches from the trusted OpenID providers, and nothing else does.
      contentSecurityPolicy: {
        useDefaults: true,
        directives: { 'upgrade-insecure-requests': null, 'style-src': ["'self'", "'unsafe-inline'"], 'connect-src': ["'self'", ...issuerOrigins] },
      },
      // Swagger UI's end-user login runs in a popup at the OpenID provider, which comes back to
      // /oauth2-redirect.html and hands the code to the page that opened it: that page keeps its
      // popups (and nothing cross-origin can open it).
      crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
    }),
    target: targetStage(),
    'request-log': requestLogStage(createRequestLogger(settings.LOG_LEVEL, logStream)),
    drain: drainStage(app.get(Drain)),
    identify: identifyStage(
      app.get(Authenticator),
      {
        publicOrigin: settings.PUBLIC_BASE_URL,
        sessions: app.get(BrowserSessions).enabled ? { allowedOrigins: () => app.get(BrowserSessions).allowedOrigins() } : undefined,
      },
      // The API and unmatched routes (what the rate limit counts), and the admin paths.
      // A path with a credential of its own (METRICS_TOKEN) identifies nobody: its token is compared, never looked up.
      (request) => {
        if (isLimited(request.routeOptions.url)) return true;
        const admin = adminPathOf(adminPaths, request);
        return admin !== undefined && admin.token === undefined;
      },
      // Refused credentials count everywhere; a spent budget refuses before the lookup on the admin paths.
      // (The admin paths lie outside the API: a route the rate limit counts is never one of them.)
      {
        exhausted: (ip) => refusals.exhausted(ip),
        refused: (ip) => refusals.refused(ip),
        applies: (request) => !isLimited(request.routeOptions.url) && adminPathOf(adminPaths, request) !== undefined,
      },
      // Every use of an admin token is counted (GatewayBreakGlassUsed fires on it), but a scrape of /metrics: a Prometheus
      // that still scrapes with one (METRICS_TOKEN is its credential) would keep the alert firing, and it reads counters only.
      (caller, request) => {
        if (caller.role === 'admin' && adminPathOf(adminPaths, request)?.prefix !== '/metrics') breakGlass.breakGlassUsed();
      },
    ),
    'admin-paths': adminPathsStage(adminPaths, app.get(StaffPolicy), recorder),
    'rate-limit': rateLimitStage(app.get(RateLimiter)),
    metrics: settings.METRICS_ENABLED ? metricsStage(app.get(PrometheusMetrics)) : { name: 'metrics' },
  };
  return EDGE_STAGE_ORDER.map((name) => stages[name]);
}
