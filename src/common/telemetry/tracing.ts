import { Attributes, Span, SpanStatusCode, trace } from '@opentelemetry/api';

/** W3C Trace Context's sampled flag (TraceFlags.SAMPLED). */
const SAMPLED = 0x01;

/**
 * The gateway's own spans (OpenTelemetry): authentication, validation, the audit write and the
 * provider call, inside the server span of the HTTP instrumentation. Each carries the operation,
 * its outcome and, when it failed, the error code: never personal data, tokens, bodies or query
 * values. With tracing off (no OTEL_EXPORTER_OTLP_*ENDPOINT, see start-tracing.ts) every helper
 * here is one boolean test.
 */
export const TRACER_NAME = 'partner-gateway';

/** The attributes the gateway's spans carry beside the semantic conventions' own. */
export const SPAN_ATTRIBUTES = {
  operation: 'gateway.operation',
  outcome: 'gateway.outcome',
  errorCode: 'gateway.error_code',
} as const;

let on = false;

/** Called once the SDK has started (start-tracing.ts): from then on the helpers make spans. */
export function noteTracingStarted(): void {
  on = true;
}

export function tracingIsOn(): boolean {
  return on;
}

/** An error's code as the envelope shows it (DomainError, UpstreamError), else INTERNAL. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z_]+(\.[A-Z_]+)*$/.test(code) ? code : 'INTERNAL';
}

export interface SpanOutcome<T> {
  /** The outcome of a call that returned (default `succeeded`). */
  readonly succeeded?: (result: T) => string;
  /** The outcome of a call that threw (default `failed`). */
  readonly failed?: (error: unknown) => string;
}

/**
 * Runs `work` in a span of its own, a child of whatever span is current, ended when it settles.
 * A failure sets the span's status to error with the error code, never the error's message.
 */
export function traced<T>(name: string, attributes: Attributes, work: () => Promise<T>, outcome: SpanOutcome<T> = {}): Promise<T> {
  if (!on) return work();
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span: Span) => {
    try {
      const result = await work();
      span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome.succeeded?.(result) ?? 'succeeded');
      return result;
    } catch (error) {
      const code = codeOf(error);
      span.setAttributes({ [SPAN_ATTRIBUTES.outcome]: outcome.failed?.(error) ?? 'failed', [SPAN_ATTRIBUTES.errorCode]: code, 'error.type': code });
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The current span, when tracing is on and it is being recorded. */
export function currentSpan(): Span | undefined {
  if (!on) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/** The current trace's id when it is sampled (exported, so worth naming in a log line or an audit event). */
export function sampledTraceId(span: Span | undefined): string | undefined {
  const context = span?.spanContext();
  return context && (context.traceFlags & SAMPLED) === SAMPLED ? context.traceId : undefined;
}

/** The error code an answer carries, on the current span (the server span, when the error filter calls it). */
export function noteErrorCodeOnSpan(code: string): void {
  currentSpan()?.setAttributes({ [SPAN_ATTRIBUTES.errorCode]: code, 'error.type': code });
}
