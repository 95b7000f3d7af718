import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import { DomainError } from '../../../common/domain/domain-error';
import { currentRecord, logContextOf, RequestRecord } from '../../../common/domain/request-record';
import { AuditActor, AuditEvent, TerminalPhase } from './audit-event';
import { AuditOperation } from '../../../common/domain/audit-operations';
import { RequestSubject } from '../../../common/domain/request-record';
import { AuditLog, CommittedEvent } from './audit-log.port';
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
 * Another store's write that a request's terminal event commits with (the idempotency store's
 * result or release of the request's provider write: IdempotencyService's ClaimEnding).
 */
export interface ConcludingWrite {
  /** Writes the store's change and `event` in one commit, resolving to the event as committed when the store answers it; rejects when neither was written. */
  write(event: AuditEvent): Promise<CommittedEvent | undefined>;
  /** Writes the store's change alone, for a request whose terminal event was written already. */
  writeAlone(): Promise<void>;
  /**
   * When `write` failed with `error`: keeps both to write later and gives what the request is
   * answered with instead, or undefined when it does not keep them.
   */
  hold(event: AuditEvent, error: unknown): DomainError | undefined;
}

/**
 * The audit trail of the request being served. Domain services name what a request is about and
 * write `attempted` before a mutating provider call; the edge of the service writes the one
 * terminal event. An event that cannot be written is logged whole (it holds no personal data) and
 * the request fails closed with AuditUnavailable.
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger('AuditTrail');
  /** The write each request's terminal event commits with, when it has one (concludeWith). */
  private readonly concluding = new WeakMap<RequestRecord, ConcludingWrite>();

  constructor(
    private readonly log: AuditLog,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  /** Names what the request being served is about; every event it leaves carries these identifiers. */
  about(subject: RequestSubject): void {
    currentRecord().noteSubject(subject);
  }

  /**
   * Commits an `attempted` event for the request. Call it before a mutating provider call and make
   * the call only once it resolves.
   * @throws AuditUnavailable when the event could not be committed: nothing may be sent then.
   */
  async attempt(operation: AuditOperation, subject: RequestSubject): Promise<void> {
    await this.attemptWith(
      operation,
      subject,
      (event) => this.log.append(event),
      () => true,
    );
  }

  /**
   * Commits the request's `attempted` event with another store's write, which is given the
   * event and appends it in its own commit when it goes ahead (the idempotency claim does, see
   * IdempotencyStore.claim); `appended` tells from the write's result whether it did. Make the
   * mutating call only once it resolves with the event appended.
   * @throws the write's DomainError (DATABASE.UNAVAILABLE), or AuditUnavailable, when it failed:
   * nothing was committed, and nothing may be sent.
   */
  async attemptWith<R>(
    operation: AuditOperation,
    subject: RequestSubject,
    write: (event: AuditEvent) => Promise<R>,
    appended: (result: R) => boolean,
  ): Promise<R> {
    const record = currentRecord();
    record.noteSubject(subject);
    const event = this.event(record, { operation, phase: 'attempted' });
    let result: R;
    try {
      result = await write(event);
    } catch (error) {
      throw this.unwritten(event, error);
    }
    if (appended(result)) record.noteAttempted();
    return result;
  }

  /**
   * A mutating provider call whose `attempted` event is committed. When the provider answers that it
   * has already seen the reference, and this gateway's earlier attempt with it never learned its
   * outcome, that earlier attempt is what the provider saw: the partner is told so
   * (EarlierAttemptUnresolved), rather than that the provider refused.
   */
  async calling<T>(reference: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof UpstreamError && error.code === REFERENCE_ALREADY_SEEN && (await this.unresolvedBefore(currentRecord(), reference))) {
        throw new EarlierAttemptUnresolved(error);
      }
      throw error;
    }
  }

  /** Whether an attempt with this reference, other than this request's, is unresolved. */
  private async unresolvedBefore(record: RequestRecord, reference: string): Promise<boolean> {
    const page = await this.log.unresolved({ reference, attemptedBefore: this.clock.now(), exceptRequestId: record.requestId, limit: 1 });
    return page.calls.length > 0;
  }

  /**
   * The request's terminal event is to commit with `write` (its provider write's result or release):
   * one commit for both. When the terminal event was written already (the request was answered
   * before its provider call ended: a timeout, a caller that hung up), the write goes alone, now.
   */
  concludeWith(write: ConcludingWrite): void {
    const record = currentRecord();
    if (!record.concluded) {
      this.concluding.set(record, write);
      return;
    }
    write.writeAlone().catch((error: unknown) => {
      this.logger.warn({ ...logContextOf(record), err: error }, 'The end of a provider write answered earlier could not be stored');
    });
  }

  /**
   * Writes the terminal event of a request, once, with the write it commits with (concludeWith).
   * Resolves to the event once it is committed, and to it as committed when the write answers that
   * (what its receipt names); to undefined when the request was concluded before.
   * @throws AuditUnavailable when it could not be written; the write's error, or what it answers
   * with when it holds both to write later (ConcludingWrite.hold).
   */
  async conclude(record: RequestRecord, conclusion: RequestConclusion): Promise<{ event: AuditEvent; committed?: CommittedEvent } | undefined> {
    if (!record.noteConcluded()) return undefined;
    const event = this.event(record, {
      ...conclusion,
      errorMessage: conclusion.errorMessage?.slice(0, MAX_MESSAGE),
      latencyMs: Math.round(performance.now() - record.startedAt),
    });
    const along = this.concluding.get(record);
    if (!along) {
      await this.write(event);
      return { event };
    }
    this.concluding.delete(record);
    let committed: CommittedEvent | undefined;
    try {
      committed = await along.write(event);
    } catch (error) {
      const answer = along.hold(event, error);
      if (answer) throw answer;
      throw this.unwritten(event, error);
    }
    return { event, committed };
  }

  private event(record: RequestRecord, fields: Pick<AuditEvent, 'operation' | 'phase'> & Partial<AuditEvent>): AuditEvent {
    return {
      id: randomUUID(),
      occurredAt: this.clock.now(),
      requestId: record.requestId,
      ...actorOf(record),
      sourceIp: record.sourceIp,
      reference: record.reference,
      customerId: record.customerId,
      currency: record.currency,
      upstreamStatus: record.upstream?.status,
      upstreamErrorId: record.upstream?.errorId,
      upstreamLatencyMs: record.upstream?.latencyMs,
      upstreamAttempts: record.upstreamAttempts,
      replayed: record.replayed === true,
      traceId: record.traceId,
      ...fields,
    };
  }

  private async write(event: AuditEvent): Promise<void> {
    try {
      await this.log.append(event);
    } catch (error) {
      throw this.unwritten(event, error);
    }
  }

  /** The log line is the record of last resort: the event's identifiers only (loggable). */
  private unwritten(event: AuditEvent, error: unknown): DomainError {
    this.metrics.auditWriteFailed();
    this.logger.error({ ...logContextOf(event), auditEvent: loggable(event), err: error }, 'Audit event could not be written');
    return error instanceof DomainError ? error : new AuditUnavailable(error);
  }
}

/** Who made the request, as its events name them: a staff member by their id and name, never in a tenant; an admin token as break-glass. */
function actorOf(record: RequestRecord): AuditActor {
  const client = record.client;
  if (!client) return {};
  if (client.role === 'staff') {
    return {
      callerKind: 'staff',
      staffId: client.id,
      clientName: client.name.slice(0, MAX_CLIENT_NAME).toWellFormed(),
      staffRoles: record.staffRoles,
      accessReason: record.accessReason,
    };
  }
  return {
    callerKind: client.role,
    clientId: client.id,
    clientName: client.name,
    tenant: client.tenant,
    accessReason: record.accessReason,
    ...(client.role === 'admin' ? { breakGlass: true } : {}),
  };
}

/** The audit log's client_name column holds at most this many characters; a provider's display name may be longer. */
const MAX_CLIENT_NAME = 100;

/**
 * An event as its log line shows it: identifiers, statuses and timings. A staff member's display
 * name and a search's reason (words someone typed) stay in the audit log, out of the logs; their
 * `staff_id` names them there.
 */
function loggable(event: AuditEvent): AuditEvent {
  const { accessReason, clientName, ...rest } = event;
  return {
    ...rest,
    ...(event.callerKind === 'staff' || clientName === undefined ? {} : { clientName }),
    ...(accessReason === undefined ? {} : { accessReason: '[kept in the audit log only]' }),
  };
}
