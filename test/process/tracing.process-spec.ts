import { randomBytes, randomUUID } from 'node:crypto';
import { buildCustomerRequest } from '../support/builders';
import { callApi } from '../support/http';
import { rawExchange } from '../support/raw-http';
import { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver';
import { startReplicas, ReplicaSet } from '../support/replicas';
import { journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

/**
 * Traces: the built service, configured only by OTEL_* variables, exports over OTLP/HTTP to a
 * receiver on loopback; the provider is a sandbox on loopback over real HTTP.
 */
const SERVER = 2;
const CLIENT = 3;

const newTraceId = () => randomBytes(16).toString('hex');
const newSpanId = () => randomBytes(8).toString('hex');

/** The spans from `span` up to the root, through their parents (as far as they were received). */
function ancestorsOf(span: ReceivedSpan, spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let parent = spans.find((s) => s.spanId === span.parentSpanId); parent; parent = spans.find((s) => s.spanId === parent.parentSpanId)) chain.push(parent);
  return chain;
}

interface AuditEventRow {
  request_id: string;
  phase: string;
  error_id: string | null;
  trace_id: string | null;
}

describe('traces (OpenTelemetry, OTLP/HTTP)', () => {
  const receiver = new OtlpReceiver();
  let set: ReplicaSet;
  let partner: string;
  let admin: string;
  let base: string;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    set = await startReplicas(1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
    base = set.replicas[0].base;
    partner = await set.createClient('partner');
    admin = await set.createClient('admin');
  }, 120_000);
  afterAll(async () => {
    await set?.close();
    await receiver.close();
  });

  const auditEventsOf = async (query: string): Promise<AuditEventRow[]> => {
    const answer = await callApi<{ events: AuditEventRow[] }>(base, 'GET', `/api/v1/audit-events?${query}`, { token: admin });
    expect(answer.status).toBe(200);
    return answer.body.data!.events;
  };

  describe('a customer made with an incoming traceparent', () => {
    const traceId = newTraceId();
    const callerSpanId = newSpanId();
    const body = buildCustomerRequest();
    let requestId: string;
    let spans: ReceivedSpan[];
    let server: ReceivedSpan;

    beforeAll(async () => {
      requestId = randomUUID();
      const answer = await callApi(base, 'POST', '/api/v1/customers', {
        token: partner,
        body,
        requestId,
        headers: { traceparent: `00-${traceId}-${callerSpanId}-01`, tracestate: 'partner=app' },
      });
      expect(answer.status).toBe(201);
      // The server span ends last; the exporter sends it within its batch delay.
      spans = await waitFor(
        () => {
          const received = receiver.trace(traceId);
          return received.some((span) => span.kind === SERVER) &&
            received.some((span) => span.name === 'audit.write' && span.attributes['gateway.audit_phase'] === 'succeeded')
            ? received
            : undefined;
        },
        { timeoutMs: 10_000, what: 'the trace at the receiver' },
      );
      server = spans.find((span) => span.kind === SERVER)!;
    });

    it('then the server span continues the caller’s trace, named by the route pattern, from the service the variables name', () => {
      expect(server.parentSpanId).toBe(callerSpanId);
      expect(server.traceState).toBe('partner=app');
      expect(server.name).toBe('POST /api/v1/customers');
      expect(server.attributes['http.route']).toBe('/api/v1/customers');
      expect(server.attributes['http.response.status_code']).toBe(201);
      expect(server.service).toBe('gateway-under-test');
    });

    it('then authentication, validation, both audit writes and the provider call are spans in it, each with its operation and outcome', () => {
      const named = (name: string) => spans.filter((span) => span.name === name);
      expect(named('gateway.authenticate')).toHaveLength(1);
      expect(named('gateway.authenticate')[0].attributes['gateway.outcome']).toBe('succeeded');
      expect(named('gateway.validate').map((span) => [span.attributes['gateway.operation'], span.attributes['gateway.outcome']])).toContainEqual([
        'validate body',
        'succeeded',
      ]);
      expect(
        named('audit.write')
          .map((span) => [span.attributes['gateway.operation'], span.attributes['gateway.audit_phase']])
          .sort(),
      ).toEqual([
        ['customer.create', 'attempted'],
        ['customer.create', 'succeeded'],
      ]);
      expect(named('provider.call')).toHaveLength(1);
      expect(named('provider.call')[0].attributes).toMatchObject({
        'gateway.operation': 'customer.create',
        'gateway.outcome': 'success',
        'http.request.method': 'POST',
      });
      for (const span of [...named('gateway.authenticate'), ...named('gateway.validate'), ...named('audit.write'), ...named('provider.call')]) {
        expect(ancestorsOf(span, spans)).toContain(server);
      }
    });

    it('then the provider hop shares the trace: the undici span is the provider call’s child, and the provider received its traceparent', async () => {
      const providerCall = spans.find((span) => span.name === 'provider.call')!;
      const hop = spans.find((span) => span.kind === CLIENT && span.parentSpanId === providerCall.spanId);
      expect(hop).toBeDefined();
      const received = (await journal(set.sandbox)).find((entry) => entry.request_id === requestId && entry.method === 'POST');
      expect(received?.traceparent).toBe(`00-${traceId}-${hop!.spanId}-01`);
    });

    it('then the database queries of the request are in the trace too', () => {
      expect(
        spans.filter((span) => span.attributes['db.system.name'] === 'postgresql' || span.attributes['db.system'] === 'postgresql').length,
      ).toBeGreaterThan(0);
    });

    it('then its log lines and its audit events name the trace', async () => {
      // The log is written off the request path, within LOG_FLUSH_MS of the answer.
      const lines = await waitFor(
        () => {
          const found = set.replicas[0].process
            .output()
            .split('\n')
            .filter((line) => line.includes(requestId));
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 5_000, what: 'the request’s log line' },
      );
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ trace_id: traceId });
      const events = (await auditEventsOf(`reference=${body.reference as string}&reason=trace-test`)).filter((event) => event.request_id === requestId);
      expect(events.map((event) => event.phase).sort()).toEqual(['attempted', 'succeeded']);
      for (const event of events) expect(event.trace_id).toBe(traceId);
    });

    it('then no span carries personal data, the token or a body', () => {
      const exported = JSON.stringify(spans);
      for (const secret of [partner, body.first_name, body.last_name, body.email, body.phone_number, body.date_of_birth]) {
        expect(exported).not.toContain(String(secret));
      }
    });
  });

  it('finding 16: when a caller sends an unsampled traceparent under the default configuration, then the gateway decides (at 1.0: sampled) and still continues the caller’s trace', async () => {
    const traceId = newTraceId();
    const callerSpanId = newSpanId();
    const requestId = randomUUID();

    const answer = await callApi(base, 'GET', '/api/v1/me', { token: partner, requestId, headers: { traceparent: `00-${traceId}-${callerSpanId}-00` } });

    expect(answer.status).toBe(200);
    const server = await waitFor(() => receiver.trace(traceId).find((span) => span.kind === SERVER), { timeoutMs: 10_000, what: 'the server span' });
    expect(server.parentSpanId).toBe(callerSpanId);
  });

  it('when a request is refused, then error.id leads to its audit event, and the event to the trace that carries the error code', async () => {
    const answer = await callApi(base, 'POST', '/api/v1/customers', { token: partner, body: { ...buildCustomerRequest(), email: 'not-an-address' } });
    expect(answer.status).toBe(400);
    const errorId = answer.body.error!.id;

    const [event] = await auditEventsOf(`error_id=${errorId}`);
    expect(event.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const spans = await waitFor(() => (receiver.trace(event.trace_id!).some((span) => span.kind === SERVER) ? receiver.trace(event.trace_id!) : undefined), {
      timeoutMs: 10_000,
      what: 'the refused request’s trace',
    });
    expect(spans.find((span) => span.kind === SERVER)!.attributes['gateway.error_code']).toBe('REQUEST.VALIDATION_FAILED');
    expect(spans.find((span) => span.name === 'gateway.validate')!.attributes).toMatchObject({
      'gateway.outcome': 'rejected',
      'gateway.error_code': 'REQUEST.VALIDATION_FAILED',
    });
    expect(spans.some((span) => span.name === 'provider.call')).toBe(false);
  });

  it('when a query carries values, then the span keeps the canonical path and the parameters’ names only', async () => {
    const traceId = newTraceId();
    const secret = `secret-${randomUUID()}`;
    const customerId = randomUUID();
    const answer = await callApi(base, 'GET', `/api/v1/customers/${customerId}/balance?token=${secret}&limit=${secret}`, {
      token: partner,
      headers: { traceparent: `00-${traceId}-${newSpanId()}-01` },
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    const server = await waitFor(() => receiver.trace(traceId).find((span) => span.kind === SERVER), { timeoutMs: 10_000, what: 'the server span' });
    expect(JSON.stringify(receiver.trace(traceId))).not.toContain(secret);
    expect(server.attributes['url.query']).toBe('[REDACTED]&limit=[REDACTED]');
    expect(server.attributes['url.path']).toBe(`/api/v1/customers/${customerId}/balance`);
    expect(server.name).toBe('GET /api/v1/customers/:customer_id/balance');
  });

  it('when probes and scrapes arrive, in any spelling the router reads as theirs, then no trace is made for them', async () => {
    const before = receiver.spans.length;
    const probes = [newTraceId(), newTraceId()];
    expect((await fetch(`${base}/health/ready`, { headers: { traceparent: `00-${probes[0]}-${newSpanId()}-01` } })).status).toBe(200);
    expect((await fetch(`${base}/%68ealth/ready`, { headers: { traceparent: `00-${probes[1]}-${newSpanId()}-01` } })).status).toBe(200);
    // An API request in the absolute form is traced, under its canonical path.
    const api = newTraceId();
    const answer = await rawExchange(
      base,
      `GET http://health.example/api/v1/customers/${randomUUID()}/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner}\r\ntraceparent: 00-${api}-${newSpanId()}-01\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(404);
    const server = await waitFor(() => receiver.trace(api).find((span) => span.kind === SERVER), { timeoutMs: 10_000, what: 'the API request’s server span' });
    expect(server.attributes['url.path']).toMatch(/^\/api\/v1\/customers\/[0-9a-f-]+\/balance$/);
    expect(receiver.spans.length).toBeGreaterThan(before);
    for (const probe of probes) expect(receiver.trace(probe)).toEqual([]);
  });
});

describe('traces at a tiny ratio (OTEL_TRACES_SAMPLER_ARG, the sampler left unset)', () => {
  const receiver = new OtlpReceiver();
  let set: ReplicaSet;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    set = await startReplicas(1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // One trace in a billion: never, for this test's one request, unless the caller decides.
      OTEL_TRACES_SAMPLER_ARG: '0.000000001',
    });
  }, 120_000);
  afterAll(async () => {
    await set?.close();
    await receiver.close();
  });

  it('finding 16: when a caller sends a sampled traceparent with a trace id of its choosing, then the request is not sampled, and the trace id is still carried on to the provider', async () => {
    const partner = await set.createClient('partner');
    const admin = await set.createClient('admin');
    const base = set.replicas[0].base;
    // Sampled by the SDK's traceidratio at any ratio above zero (its hash is 1), and flagged sampled.
    const chosenTraceId = '00000000000000000000000000000001';
    const body = buildCustomerRequest();
    const requestId = randomUUID();

    const answer = await callApi(base, 'POST', '/api/v1/customers', {
      token: partner,
      body,
      requestId,
      headers: { traceparent: `00-${chosenTraceId}-${newSpanId()}-01` },
    });

    expect(answer.status).toBe(201);
    const events = await callApi<{ events: AuditEventRow[] }>(base, 'GET', `/api/v1/audit-events?reference=${body.reference as string}&reason=trace-test`, {
      token: admin,
    });
    const own = events.body.data!.events.filter((event) => event.request_id === requestId);
    expect(own.map((event) => [event.phase, event.trace_id]).sort()).toEqual([
      ['attempted', null],
      ['succeeded', null],
    ]);
    const received = (await journal(set.sandbox)).find((entry) => entry.request_id === requestId && entry.method === 'POST');
    expect(received?.traceparent).toMatch(new RegExp(`^00-${chosenTraceId}-[0-9a-f]{16}-00$`));
  });
});

describe('with no OTLP endpoint set', () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    set = await startReplicas(1);
  }, 120_000);
  afterAll(async () => {
    await set?.close();
  });

  it('then nothing is traced: the provider gets no traceparent, and audit events name no trace', async () => {
    const partner = await set.createClient('partner');
    const admin = await set.createClient('admin');
    const base = set.replicas[0].base;
    const body = buildCustomerRequest();
    const requestId = randomUUID();
    const answer = await callApi(base, 'POST', '/api/v1/customers', {
      token: partner,
      body,
      requestId,
      headers: { traceparent: `00-${newTraceId()}-${newSpanId()}-01` },
    });
    expect(answer.status).toBe(201);
    const received = (await journal(set.sandbox)).find((entry) => entry.request_id === requestId);
    expect(received).toBeDefined();
    expect(received!.traceparent).toBeNull();
    const events = await callApi<{ events: AuditEventRow[] }>(base, 'GET', `/api/v1/audit-events?reference=${body.reference as string}&reason=trace-test`, {
      token: admin,
    });
    expect(events.body.data!.events.length).toBeGreaterThan(0);
    for (const event of events.body.data!.events) expect(event.trace_id).toBeNull();
  });
});
