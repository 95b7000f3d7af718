import type { IncomingMessage } from 'node:http';
import type * as HttpInstrumentationModule from '@opentelemetry/instrumentation-http';
import type * as PgInstrumentationModule from '@opentelemetry/instrumentation-pg';
import type * as UndiciInstrumentationModule from '@opentelemetry/instrumentation-undici';
import type * as SdkModule from '@opentelemetry/sdk-node';
import { isUnder } from '../http/canonical-target';
import { targetOf } from '../http/request-context';
import { loggedUrl } from './logging';
import { edgeSamplerFor } from '../telemetry/edge-sampler';
import { noteTracingStarted } from '../telemetry/tracing';

/**
 * Requests no trace is made for: the probes and the scrapes, every few seconds from every replica.
 * Decided on the canonical path, as the router reads it, never on the raw request line.
 */
const untraced = (request: IncomingMessage): boolean => {
  const { path } = targetOf(request);
  return isUnder('/health', path) || isUnder('/metrics', path);
};

export interface Tracing {
  /** Exports the spans still waiting, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Whether the environment asks for traces: an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and the SDK is not disabled (OTEL_SDK_DISABLED).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry SDK, configured by the standard OTEL_* variables only (exporter, protocol,
 * sampler, resource, batching), with the maintained instrumentations of the service's I/O:
 * - HTTP server (the request's server span; an incoming traceparent/tracestate is continued);
 * - undici (the provider call and the OpenID provider's, each carrying the trace onward);
 * - pg (each query of a request; queries outside a request, such as the sealer's, make none).
 * Traces only: metrics stay Prometheus's (/metrics) and logs stdout's, so no OTLP metrics or logs
 * are sent unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask for them. Whether a trace is sampled
 * is decided here, never by a caller's traceparent, unless OTEL_TRACES_SAMPLER names a parent-based
 * sampler (edge-sampler.ts).
 *
 * Must run before anything requires `http` or `pg`: main.ts imports this module first.
 * @returns undefined when tracing is off (no endpoint set): nothing is loaded, nothing costs.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (!tracingRequested(env)) return undefined;
  env.OTEL_SERVICE_NAME ??= 'partner-gateway';
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  // Loaded only now: the SDK and its instrumentations weigh about 30 MiB and 0.4 s of start-up,
  // which a service without tracing must not pay. (require, not import(): the SDK must be running
  // before main.ts goes on to require http and pg, and an import() would finish after them.)
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startNodeSdk } = require('@opentelemetry/sdk-node') as typeof SdkModule;
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof HttpInstrumentationModule;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof PgInstrumentationModule;
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof UndiciInstrumentationModule;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sdk = startNodeSdk({
    sampler: edgeSamplerFor(env),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: untraced,
        // The service calls out through undici only; Node's http client is not its.
        disableOutgoingRequestInstrumentation: true,
        // The span's URL is the canonical reading the router uses, with the query's values redacted
        // (as the request log writes it); the caller's address is the connection's until the edge
        // knows the one TRUST_PROXY makes of it (trace stage).
        startIncomingSpanHook: (request: IncomingMessage) => {
          const logged = loggedUrl(targetOf(request));
          const query = logged.indexOf('?');
          return {
            'url.path': query === -1 ? logged : logged.slice(0, query),
            ...(query === -1 ? {} : { 'url.query': logged.slice(query + 1) }),
            'client.address': request.socket.remoteAddress ?? '',
          };
        },
      }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ],
  });
  noteTracingStarted();
  return sdk;
}
