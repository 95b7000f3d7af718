import { currentSpan, sampledTraceId, tracingIsOn } from '../telemetry/tracing';
import type { EdgeStage } from './edge-stage';
import { contextOf } from './request-context';

/**
 * The trace stage: the request's server span (made by the HTTP instrumentation, continuing an
 * incoming traceparent) is named by its route pattern, never the raw path, and carries the caller's
 * address as the edge decides it (TRUST_PROXY); its URL attributes are already the canonical
 * reading (start-tracing.ts). A sampled trace's id goes into the request's record, so that its log
 * lines and audit events name it. With tracing off, the stage does nothing.
 */
export function traceStage(): EdgeStage {
  if (!tracingIsOn()) return { name: 'trace' };
  return {
    name: 'trace',
    onRequest: (request) => {
      const span = currentSpan();
      if (!span) return;
      const route = request.routeOptions.url;
      if (route !== undefined) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('client.address', request.ip);
      const traceId = sampledTraceId(span);
      if (traceId) contextOf(request.raw).record.noteTrace(traceId);
    },
  };
}
