import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SealerState, SealerStatus, unsealedAgeSeconds } from '../common/domain/audit-seal-status';
import { Metrics } from '../common/domain/metrics.port';

const CIRCUIT_STATES = ['closed', 'half-open', 'open', 'isolated'] as const;
const SEALER_STATES: readonly SealerState[] = ['running', 'failing', 'stopped', 'off'];

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
  private readonly breakGlass: Counter;
  private readonly replays: Counter<'operation'>;
  private readonly sealerState: Gauge<'state'>;
  private readonly newestCheckpointSeq: Gauge;
  private readonly newestCheckpointTime: Gauge;
  private readonly sealMaxLag: Gauge;
  private readonly errors: Counter<'code'>;
  private readonly unresolved: Gauge;
  private readonly heldOutcomes: Gauge;
  private readonly lateOutcomes: Histogram;
  /** When the oldest held outcome was held (none: undefined). */
  private oldestHeldAt?: Date;
  /** Made at the first readiness check: before one, there is no verdict to export (and nothing for an alert to fire on). */
  private ready?: Gauge;
  private sealer?: SealerStatus;

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
    this.sealerState = new Gauge({
      name: 'audit_sealer_state',
      help: 'The audit sealer: 1 for the state it is in (running, failing, stopped, off), 0 for the others',
      labelNames: ['state'],
      registers,
    });
    this.newestCheckpointSeq = new Gauge({
      name: 'audit_seal_newest_checkpoint_seq',
      help: 'The number of the newest audit checkpoint (0: none yet)',
      registers,
    });
    this.newestCheckpointTime = new Gauge({
      name: 'audit_seal_newest_checkpoint_timestamp_seconds',
      help: 'When the newest audit checkpoint was signed, in seconds since the epoch (0: none yet)',
      registers,
    });
    // Computed at each scrape from when the event occurred: right even if the sealer's rounds stall.
    const waited = () => (this.sealer ? unsealedAgeSeconds(this.sealer, new Date()) : 0);
    new Gauge({
      name: 'audit_seal_oldest_unsealed_age_seconds',
      help: 'How long the oldest audit event waiting to be sealed has waited, at the moment of the scrape (0: none waits)',
      registers,
      collect() {
        this.set(waited());
      },
    });
    this.sealMaxLag = new Gauge({
      name: 'audit_seal_max_lag_seconds',
      help: 'AUDIT_SEAL_MAX_LAG_SECONDS: an event waiting longer to be sealed means the sealer lags',
      registers,
    });
    this.errors = new Counter({
      name: 'api_errors_total',
      help: 'Requests answered with an error, by the error code the envelope carries (RATE_LIMIT.EXCEEDED: rate-limit refusals)',
      labelNames: ['code'],
      registers,
    });
    this.unresolved = new Gauge({
      name: 'audit_unresolved_calls',
      help: 'Mutating provider calls whose outcome is unknown, waiting for reconciliation (as of the last count, every 30 s; at most 500)',
      registers,
    });
    this.heldOutcomes = new Gauge({
      name: 'idempotency_held_outcomes',
      help: 'Provider writes whose outcome (result or release, with its audit event) is held in memory because the database did not take it',
      registers,
    });
    // Computed at each scrape, like the unsealed age: right even when nothing changes meanwhile.
    const heldFor = () => (this.oldestHeldAt ? Math.max(0, (Date.now() - this.oldestHeldAt.getTime()) / 1000) : 0);
    new Gauge({
      name: 'idempotency_held_outcome_oldest_age_seconds',
      help: 'How long the oldest held outcome has been held, at the moment of the scrape (0: none held)',
      registers,
      collect() {
        this.set(heldFor());
      },
    });
    this.lateOutcomes = new Histogram({
      name: 'idempotency_held_outcome_written_seconds',
      help: 'Held outcomes written once the database took them again, by how long they were held',
      buckets: [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.breakGlass = new Counter({
      name: 'auth_break_glass_requests_total',
      help: 'Requests made with an admin client token (break-glass: automation and emergencies; staff sign in at the company provider)',
      registers,
    });
    this.upstreamCircuit('closed');
  }

  breakGlassUsed(): void {
    this.breakGlass.inc();
  }

  outcomesHeld(count: number, oldestHeldAt: Date | undefined): void {
    this.heldOutcomes.set(count);
    this.oldestHeldAt = oldestHeldAt;
  }

  outcomeWrittenLate(heldSeconds: number): void {
    this.lateOutcomes.observe(heldSeconds);
  }

  errorAnswered(code: string): void {
    this.errors.inc({ code });
  }

  unresolvedCalls(count: number): void {
    this.unresolved.set(count);
  }

  readiness(ready: boolean): void {
    this.ready ??= new Gauge({
      name: 'health_ready',
      help: 'The last readiness check: 1 ready, 0 not (the database does not answer, or the instance drains); absent until the first check',
      registers: [this.registry],
    });
    this.ready.set(ready ? 1 : 0);
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

  auditSealer(status: SealerStatus): void {
    this.sealer = status;
    for (const state of SEALER_STATES) this.sealerState.set({ state }, state === status.state ? 1 : 0);
    this.newestCheckpointSeq.set(status.newestCheckpoint?.seq ?? 0);
    this.newestCheckpointTime.set(status.newestCheckpoint ? status.newestCheckpoint.sealedAt.getTime() / 1000 : 0);
    this.sealMaxLag.set(status.maxLagSeconds);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
