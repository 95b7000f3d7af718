import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter, Sampler, SamplingDecision, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { EdgeSampler, edgeSamplerFor } from './edge-sampler';

/** A caller's traceparent as the HTTP instrumentation extracts it: a remote parent. */
function callerContext(traceId: string, sampled: boolean) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: '00f067aa0ba902b7',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

/** A trace id that the SDK's traceidratio samples at any ratio above zero (its hash is 1). */
const CHOSEN_TRACE_ID = '00000000000000000000000000000001';

/** The sampler asked as the SDK asks it, for a server span. */
const decide = (sut: Sampler, context = callerContext(CHOSEN_TRACE_ID, true)) =>
  sut.shouldSample(context, CHOSEN_TRACE_ID, 'GET /api/v1/me', SpanKind.SERVER, {}, []).decision;

describe(EdgeSampler.name, () => {
  it('finding 16: when a caller sends a sampled traceparent and the ratio is 0, then the request is not sampled', () => {
    const sut = edgeSamplerFor({ OTEL_TRACES_SAMPLER_ARG: '0' })!;

    expect(decide(sut)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('finding 16: when OTEL_TRACES_SAMPLER is traceidratio and a caller chooses a trace id that ratio always keeps, then it is not sampled at a tiny ratio', () => {
    const sut = edgeSamplerFor({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.000000001' })!;

    expect(decide(sut)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('finding 16: when a caller sends an unsampled traceparent under the default ratio (1.0), then it is sampled all the same: the flag decides nothing', () => {
    const sut = edgeSamplerFor({})!;

    expect(sut.ratio).toBe(1);
    expect(decide(sut, callerContext(CHOSEN_TRACE_ID, false))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it('finding 16: when the SDK starts the server span under a caller’s traceparent, then the caller’s trace id is continued whatever is decided', () => {
    const exporter = new InMemorySpanExporter();
    const callerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    for (const ratio of [0, 1]) {
      const tracer = new TracerProvider({ sampler: new EdgeSampler(ratio), spanProcessors: [new SimpleSpanProcessor({ exporter })] }).getTracer('test');

      const span = tracer.startSpan('GET /api/v1/me', { kind: SpanKind.SERVER }, callerContext(callerTraceId, ratio === 0));
      span.end();

      expect({ ratio, traceId: span.spanContext().traceId, sampled: (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0 }).toEqual({
        ratio,
        traceId: callerTraceId,
        sampled: ratio === 1,
      });
    }
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().traceId)).toEqual([callerTraceId]);
  });

  it('when a span’s parent is a span of this process, then it follows the parent’s decision, so a trace is kept or dropped whole', () => {
    const sut = new EdgeSampler(0.5);
    const local = (sampled: boolean) =>
      trace.setSpanContext(ROOT_CONTEXT, { traceId: CHOSEN_TRACE_ID, spanId: '00f067aa0ba902b7', traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE });

    for (let i = 0; i < 50; i++) {
      expect(decide(sut, local(true))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      expect(decide(sut, local(false))).toBe(SamplingDecision.NOT_RECORD);
    }
  });

  it('when the ratio is a half, then about half of the callers’ requests and of the new traces are sampled, by a draw of the gateway', () => {
    const sut = edgeSamplerFor({ OTEL_TRACES_SAMPLER_ARG: '0.5' })!;
    const draws = 20_000;
    let sampled = 0;

    for (let i = 0; i < draws; i++) {
      const context = i % 2 === 0 ? callerContext(CHOSEN_TRACE_ID, true) : ROOT_CONTEXT;
      if (decide(sut, context) === SamplingDecision.RECORD_AND_SAMPLED) sampled++;
    }

    // 20,000 fair draws land outside 45–55% with a probability below 10^-40.
    expect(sampled / draws).toBeGreaterThan(0.45);
    expect(sampled / draws).toBeLessThan(0.55);
  });
});

describe(edgeSamplerFor.name, () => {
  it.each(['always_on', 'always_off', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])(
    'when OTEL_TRACES_SAMPLER is %s, then the SDK’s own sampler applies (an operator’s explicit choice)',
    (name) => {
      expect(edgeSamplerFor({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0.1' })).toBeUndefined();
    },
  );

  it.each([
    [{}, 1],
    [{ OTEL_TRACES_SAMPLER_ARG: '0.25' }, 0.25],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, 0.1],
    [{ OTEL_TRACES_SAMPLER: 'not-a-sampler', OTEL_TRACES_SAMPLER_ARG: '0.1' }, 0.1],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 1],
    [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, 1],
  ])('when the variables are %j, then the gateway’s sampler decides at the ratio %s', (env, ratio) => {
    expect(edgeSamplerFor(env)?.ratio).toBe(ratio);
  });
});
