import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import { currentRecord, noteAttempted, noteConcluded, noteSubject, RequestRecord, StoreResult, takeResultToStore } from '../../../common/domain/request-record';
import { Transaction, UnitOfWork } from '../../../common/domain/unit-of-work.port';
import { AuditEvent, AuditOperation, RequestSubject, TerminalPhase } from './audit-event';
import { AuditLog } from './audit-log.port';
import { AuditUnavailable, EarlierAttemptUnresolved } from './audit.errors';
import { REFERENCE_ALREADY_SEEN, UpstreamError } from '../../../common/domain/upstream';
import { Metrics } from '../../../common/domain/metrics.port';

/** How a request ended, as the edge of the service saw it. */
export interface RequestConclusion {
  readonly operation: AuditOperation;
  readonly phase: TerminalPhase;
  readonly httpMethod?: string;
  readonly route?: string;
  readonly httpStatus: number;
  readonly errorId?: string;
  readonly errorCode?: string;
  readonly errorMessage?: string;
}

const MAX_MESSAGE = 500;

/**
 * The audit trail of the request being served. Domain services name what a request is about and
 * write `attempted` before a mutating provider call; the edge of the service writes the one
 * terminal event. An event that cannot be written is logged whole (it holds no personal data) and
 * the request fails closed with AuditUnavailable. A provider write's `attempted` event commits with
 * its idempotency claim (attemptIn), and its terminal event with its stored result (conclude).
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger('AuditTrail');

  constructor(
    private readonly log: AuditLog,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /** Names what the current request is about; every event it leaves carries these identifiers. */
  about(subject: RequestSubject): void {
    noteSubject(subject);
  }

  /**
   * Commits an `attempted` event for the current request. Call it before a mutating provider call
   * and make the call only once it resolves.
   * @throws AuditUnavailable when the event could not be committed: nothing may be sent then.
   */
  async attempt(operation: AuditOperation, subject: RequestSubject): Promise<void> {
    const record = this.requestRecord('attempt');
    noteSubject(subject, record);
    await this.write(this.event(record, { operation, phase: 'attempted' }));
    noteAttempted(record);
  }

  /**
   * Writes the current request's `attempted` event in `tx`: it commits with whatever else the
   * transaction holds (the idempotency claim). Make the call, through `afterAttempt`, only once
   * the transaction has committed.
   * @throws AuditUnavailable when the event could not be written: nothing may be sent then.
   */
  async attemptIn(tx: Transaction, operation: AuditOperation, subject: RequestSubject): Promise<void> {
    const record = this.requestRecord('attemptIn');
    noteSubject(subject, record);
    await this.write(this.event(record, { operation, phase: 'attempted' }), tx);
  }

  /**
   * A mutating provider call, recorded: commits its `attempted` event (see attempt), then makes the
   * call (see afterAttempt).
   */
  async attempted<T>(operation: AuditOperation, subject: RequestSubject & { readonly reference: string }, call: () => Promise<T>): Promise<T> {
    await this.attempt(operation, subject);
    return this.afterAttempt(subject.reference, call);
  }

  /**
   * Makes a mutating provider call whose `attempted` event is committed. When the provider answers
   * that it has already seen the reference, and this gateway's earlier attempt with it never
   * learned its outcome, that earlier attempt is what the provider saw: the partner is told so
   * (EarlierAttemptUnresolved), rather than that the provider refused.
   */
  async afterAttempt<T>(reference: string, call: () => Promise<T>): Promise<T> {
    noteAttempted(this.requestRecord('afterAttempt'));
    try {
      return await call();
    } catch (error) {
      if (error instanceof UpstreamError && error.code === REFERENCE_ALREADY_SEEN && (await this.unresolvedBefore(reference))) {
        throw new EarlierAttemptUnresolved(error);
      }
      throw error;
    }
  }

  private requestRecord(caller: string): RequestRecord {
    const record = currentRecord();
    if (!record) throw new Error(`AuditTrail.${caller} called outside a request`);
    return record;
  }

  /** Whether an attempt with this reference, other than the current request's, is unresolved. */
  private async unresolvedBefore(reference: string): Promise<boolean> {
    const page = await this.log.unresolved({ reference, attemptedBefore: this.clock.now(), exceptRequestId: currentRecord()?.requestId, limit: 1 });
    return page.calls.length > 0;
  }

  /**
   * Writes the terminal event of a request, once; in one transaction with the result of its
   * provider write, when it made one that returned (see IdempotencyService.run).
   * @throws AuditUnavailable when it could not be written (nor the result stored).
   */
  async conclude(record: RequestRecord, conclusion: RequestConclusion): Promise<void> {
    if (!noteConcluded(record)) return;
    const event = this.event(record, {
      ...conclusion,
      errorMessage: conclusion.errorMessage?.slice(0, MAX_MESSAGE),
      latencyMs: Math.round(performance.now() - record.startedAt),
    });
    const storeResult = takeResultToStore(record);
    await (storeResult ? this.writeWith(event, storeResult) : this.write(event));
  }

  private event(record: RequestRecord, fields: Pick<AuditEvent, 'operation' | 'phase'> & Partial<AuditEvent>): AuditEvent {
    return {
      id: randomUUID(),
      occurredAt: this.clock.now(),
      requestId: record.requestId,
      callerKind: record.client?.role,
      clientId: record.client?.id,
      clientName: record.client?.name,
      tenant: record.client?.tenant,
      sourceIp: record.sourceIp,
      reference: record.reference,
      customerId: record.customerId,
      currency: record.currency,
      upstreamStatus: record.upstream?.status,
      upstreamErrorId: record.upstream?.errorId,
      upstreamLatencyMs: record.upstream?.latencyMs,
      replayed: record.replayed === true,
      traceId: record.traceId,
      ...fields,
    };
  }

  private write(event: AuditEvent, tx?: Transaction): Promise<void> {
    return this.failingClosed(event, () => this.log.append(event, tx));
  }

  /** The event and a provider write's result, committed together. */
  private writeWith(event: AuditEvent, storeResult: StoreResult): Promise<void> {
    return this.failingClosed(event, () =>
      this.unitOfWork.run(async (tx) => {
        await storeResult(tx);
        await this.log.append(event, tx);
      }),
    );
  }

  private async failingClosed(event: AuditEvent, writing: () => Promise<void>): Promise<void> {
    try {
      await writing();
    } catch (error) {
      // The log line is the record of last resort: the event holds identifiers only.
      this.metrics.auditWriteFailed();
      this.logger.error({ auditEvent: event, err: error }, 'Audit event could not be written');
      throw new AuditUnavailable(error);
    }
  }
}
