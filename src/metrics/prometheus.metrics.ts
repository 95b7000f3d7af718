import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Metrics } from '../common/domain/metrics.port';

const CIRCUIT_STATES = ['closed', 'half-open', 'open', 'isolated'] as const;

/**
 * Prometheus metrics, in a registry of this instance's own (so several applications in one process
 * never share counters). Process metrics (CPU, memory, event loop lag, GC) come with it.
 */
export class PrometheusMetrics extends Metrics {
  readonly registry = new Registry();
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly upstream: Histogram<'operation' | 'outcome'>;
  private readonly circuit: Gauge<'state'>;
  private readonly auditFailures: Counter;
  private readonly replays: Counter<'operation'>;

  constructor() {
    super();
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstream = new Histogram({
      name: 'upstream_request_duration_seconds',
      help: 'Time of a provider call including retries, by operation and outcome',
      labelNames: ['operation', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.circuit = new Gauge({
      name: 'upstream_circuit_state',
      help: 'The provider circuit: 1 for the state it is in, 0 for the others',
      labelNames: ['state'],
      registers,
    });
    this.auditFailures = new Counter({
      name: 'audit_write_failures_total',
      help: 'Audit events that could not be written (each such request failed closed)',
      registers,
    });
    this.replays = new Counter({
      name: 'idempotency_replays_total',
      help: 'Requests answered from the idempotency store instead of the provider',
      labelNames: ['operation'],
      registers,
    });
    this.upstreamCircuit('closed');
  }

  requestServed(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
  }

  upstreamCall(operation: string, outcome: string, seconds: number): void {
    this.upstream.observe({ operation, outcome }, seconds);
  }

  upstreamCircuit(state: (typeof CIRCUIT_STATES)[number]): void {
    for (const candidate of CIRCUIT_STATES) this.circuit.set({ state: candidate }, candidate === state ? 1 : 0);
  }

  auditWriteFailed(): void {
    this.auditFailures.inc();
  }

  idempotentReplay(operation: string): void {
    this.replays.inc({ operation });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
