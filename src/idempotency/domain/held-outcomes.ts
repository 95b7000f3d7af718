import { Logger } from '@nestjs/common';
import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import { Clock } from '../../common/domain/clock.port';
import { logContextOf } from '../../common/domain/request-record';
import { Metrics } from '../../common/domain/metrics.port';
import { IdempotencyKey } from './idempotency';

/**
 * How a provider write ended, as the idempotency store records it: its result stored to replay
 * (`completed`), or its claim released for a retry (`released`).
 */
export type WriteEnding = { readonly kind: 'completed'; readonly result: unknown } | { readonly kind: 'released' };

/**
 * The end of a provider write that the database could not take when the request ended: the
 * store's change and the request's terminal event, kept in this process until they can be written
 * together.
 */
export interface HeldOutcome {
  readonly key: IdempotencyKey;
  readonly fingerprint: string;
  readonly ending: WriteEnding;
  /** The request's terminal event, saying what the partner was answered. */
  readonly event: AuditEvent;
  /** When it was held (the clock's milliseconds). */
  readonly heldAt: number;
  /** Writes the store's change and the event in one commit; rejects when neither was written. */
  write(): Promise<void>;
}

/** What HeldOutcomes is configured with. */
export abstract class HeldOutcomesOptions {
  /** At most this many are held; a further one fails its request as the database's outage does. */
  abstract readonly max: number;
  /** How often held outcomes are tried again while the database does not take them. */
  abstract readonly retryEveryMs: number;
}

/** Whether an error is the database being away (the write may succeed later), as opposed to a write refused for good. */
export type IsOutage = (error: unknown) => boolean;

/**
 * Outcomes the provider gave and the database could not take (docs/operations.md, "A database
 * outage"): held in arrival order, bounded, and written as soon as the database takes them again,
 * oldest first. A retry of the same reference on this replica is answered from here meanwhile
 * (IdempotencyService); on another replica, from the database once this one has written it.
 * At shutdown they are written first, within the shutdown's deadline; a crash leaves them to
 * reconciliation (their `attempted` events have no terminal event).
 */
export class HeldOutcomes {
  private readonly logger = new Logger('HeldOutcomes');
  /** By reference, in the order they were held (a Map keeps insertion order). */
  private readonly held = new Map<string, HeldOutcome>();
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;

  constructor(
    private readonly options: HeldOutcomesOptions,
    private readonly isOutage: IsOutage,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  get size(): number {
    return this.held.size;
  }

  /** Holds an outcome to write later; false when as many as allowed are held already. */
  hold(outcome: HeldOutcome): boolean {
    if (this.held.size >= this.options.max && !this.held.has(outcome.key.reference)) return false;
    this.held.delete(outcome.key.reference);
    this.held.set(outcome.key.reference, outcome);
    this.logger.warn(
      { ...logContextOf(outcome.event), reference: outcome.key.reference, ending: outcome.ending.kind, held: this.held.size },
      'The database did not take a provider write’s outcome: held, to be written when it answers',
    );
    this.report();
    this.schedule();
    return true;
  }

  /** The outcome held for a reference, if any. */
  find(reference: string): HeldOutcome | undefined {
    return this.held.get(reference);
  }

  /**
   * Tries to write the outcome held for a reference now (a retry of it has come). Resolves true once
   * it is written, or when none is held; false while the database does not take it.
   */
  async writeNow(reference: string): Promise<boolean> {
    const outcome = this.held.get(reference);
    if (!outcome) return true;
    return (await this.writeOne(outcome)) !== 'outage';
  }

  /** Writes what is held, oldest first, until the database refuses; then tries again later. */
  flush(): Promise<void> {
    this.writing ??= this.writeHeld().finally(() => {
      this.writing = undefined;
      this.schedule();
    });
    return this.writing;
  }

  /**
   * At shutdown: keeps writing until nothing is held or the deadline passes. Whatever is still
   * held then is logged (each event whole: identifiers only) and left to reconciliation.
   */
  async drain(deadline: number): Promise<void> {
    this.stopTimer();
    while (this.held.size > 0 && Date.now() < deadline) {
      await this.flush();
      this.stopTimer();
      if (this.held.size > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(this.options.retryEveryMs, Math.max(0, deadline - Date.now()))));
    }
    for (const outcome of this.held.values()) {
      this.logger.error(
        { ...logContextOf(outcome.event), auditEvent: outcome.event, reference: outcome.key.reference, ending: outcome.ending.kind },
        'Shutting down with a provider write’s outcome unwritten: reconciliation will find its attempt',
      );
    }
  }

  private async writeHeld(): Promise<void> {
    for (const outcome of [...this.held.values()]) {
      if ((await this.writeOne(outcome)) === 'outage') return;
    }
  }

  private async writeOne(outcome: HeldOutcome): Promise<'written' | 'outage' | 'dropped'> {
    if (this.held.get(outcome.key.reference) !== outcome) return 'written';
    try {
      await outcome.write();
    } catch (error) {
      if (this.isOutage(error)) return 'outage';
      // Refused for good (never expected: it was accepted once, as a request's own write). The line is the record of last resort.
      this.held.delete(outcome.key.reference);
      this.report();
      this.metrics.auditWriteFailed();
      this.logger.error(
        { ...logContextOf(outcome.event), auditEvent: outcome.event, reference: outcome.key.reference, err: error },
        'A held outcome was refused by the database: dropped',
      );
      return 'dropped';
    }
    if (this.held.get(outcome.key.reference) === outcome) this.held.delete(outcome.key.reference);
    const heldSeconds = (this.clock.now().getTime() - outcome.heldAt) / 1000;
    this.metrics.outcomeWrittenLate(heldSeconds);
    this.report();
    this.logger.log(
      { ...logContextOf(outcome.event), reference: outcome.key.reference, ending: outcome.ending.kind, heldSeconds, held: this.held.size },
      'A held outcome was written late',
    );
    return 'written';
  }

  private report(): void {
    let oldest: number | undefined;
    for (const outcome of this.held.values()) {
      oldest = outcome.heldAt;
      break;
    }
    this.metrics.outcomesHeld(this.held.size, oldest === undefined ? undefined : new Date(oldest));
  }

  private schedule(): void {
    if (this.timer || this.held.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.retryEveryMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
