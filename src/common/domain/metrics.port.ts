import type { SealerStatus } from './audit-seal-status';

/**
 * What the service counts for its operators. Domain services and adapters report through this
 * port; the Prometheus adapter in metrics/ is the one implementation.
 */
export abstract class Metrics {
  /** A request answered: its route pattern (never the raw path), method and status. */
  abstract requestServed(method: string, route: string, status: number, seconds: number): void;
  /** A provider call ended: `success`, or the failure's kind (`timeout`, `rejected`, …). */
  abstract upstreamCall(operation: string, outcome: string, seconds: number): void;
  /** The provider circuit changed state. */
  abstract upstreamCircuit(state: 'closed' | 'open' | 'half-open' | 'isolated'): void;
  /** An audit event could not be written (the request failed closed). */
  abstract auditWriteFailed(): void;
  /** A request was answered from the idempotency store. */
  abstract idempotentReplay(operation: string): void;
  /** Provider writes' outcomes held in memory while the database does not take them: how many, and since when the oldest. */
  abstract outcomesHeld(count: number, oldestHeldAt: Date | undefined): void;
  /** A held outcome was written, this long after it was held. */
  abstract outcomeWrittenLate(heldSeconds: number): void;
  /** The audit sealer's state, after each of its rounds (every second). */
  abstract auditSealer(status: SealerStatus): void;
  /** A request was answered with an error: its code (`RATE_LIMIT.EXCEEDED`, `UPSTREAM.TIMEOUT`, …). */
  abstract errorAnswered(code: string): void;
  /** Mutating calls whose outcome is unknown and that wait for reconciliation (a count of at most `cap`). */
  abstract unresolvedCalls(count: number): void;
  /** A request came with an admin client token: the break-glass credential (an alert fires on it). */
  abstract breakGlassUsed(): void;
  /** The readiness check's verdict, each time it runs (the orchestrator probes it every few seconds). */
  abstract readiness(ready: boolean): void;
}
