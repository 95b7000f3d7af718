import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { DomainError } from '../domain/domain-error';
import { noteTracingStarted, SPAN_ATTRIBUTES, traced, tracingIsOn } from './tracing';

describe(traced.name, () => {
  const exporter = new InMemorySpanExporter();

  it('when tracing is off, then the work runs and no span is made', async () => {
    expect(tracingIsOn()).toBe(false);
    trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));

    await expect(traced('off', {}, () => Promise.resolve(42))).resolves.toBe(42);

    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  describe('when tracing is on', () => {
    beforeAll(() => noteTracingStarted());
    beforeEach(() => exporter.reset());

    it('when the work returns, then its span carries the attributes given and the outcome succeeded', async () => {
      await expect(traced('provider.call', { [SPAN_ATTRIBUTES.operation]: 'balance.read' }, () => Promise.resolve('ok'))).resolves.toBe('ok');

      const [span] = exporter.getFinishedSpans();
      expect(span.name).toBe('provider.call');
      expect(span.attributes).toEqual({ 'gateway.operation': 'balance.read', 'gateway.outcome': 'succeeded' });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('when the work throws a domain error, then the span has its code and the outcome given, never its message, and the error goes on', async () => {
      const error = new DomainError('REQUEST.VALIDATION_FAILED', { details: 'email ada@example.com is not valid' });

      await expect(traced('gateway.validate', {}, () => Promise.reject(error), { failed: () => 'rejected' })).rejects.toBe(error);

      const [span] = exporter.getFinishedSpans();
      expect(span.attributes).toEqual({
        'gateway.outcome': 'rejected',
        'gateway.error_code': 'REQUEST.VALIDATION_FAILED',
        'error.type': 'REQUEST.VALIDATION_FAILED',
      });
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
      expect(JSON.stringify(span.events)).not.toContain('ada@example.com');
    });

    it('when the work throws anything else, then the code is INTERNAL and the outcome failed', async () => {
      await expect(traced('audit.write', {}, () => Promise.reject(new Error('connection to 10.0.0.1 refused')))).rejects.toThrow();

      const [span] = exporter.getFinishedSpans();
      expect(span.attributes).toEqual({ 'gateway.outcome': 'failed', 'gateway.error_code': 'INTERNAL', 'error.type': 'INTERNAL' });
      expect(span.status.message).toBeUndefined();
    });
  });
});
