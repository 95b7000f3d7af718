import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/domain/clock.port';
import { DomainError } from '../../common/domain/domain-error';
import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import type { CommittedEvent } from '../../audit/trail/domain/audit-log.port';
import { Claim, IdempotencyKey } from './idempotency';
import { ClaimRequest, IdempotencyStore, KeptResult, KeptWrite, OwnClaim } from './idempotency-store.port';
import { OutcomePending, ReferenceInFlight, ReferenceReused, ReferenceTaken } from './idempotency.errors';
import { HeldOutcome, HeldOutcomes, WriteEnding } from './held-outcomes';
import { Metrics } from '../../common/domain/metrics.port';
import type { EventOrigin } from '../../common/domain/event-origin';

/** Provided by the module from configuration. */
export abstract class IdempotencyOptions {
  abstract readonly ttlMs: number;
  /** How long a claim may stay in flight before another attempt may take it over. */
  abstract readonly lockMs: number;
  /** How long a request with a claim can take, at most: its provider call, and its writes. Past this it is no longer in flight. */
  abstract readonly workMs: number;
  /** How long a request finding its reference in flight waits for that attempt to end before it answers. */
  abstract readonly settleWaitMs: number;
}

/** What else a completed write's result needs written, told what records it (RunOptions.settle). */
type Settle = (recordedBy: EventOrigin) => Promise<void>;

/** How often a request waiting for an attempt in flight looks again. */
const SETTLE_POLL_MS = 100;

/**
 * Commits a write-ahead event with the claim: given the claim, which appends the event it is passed
 * (IdempotencyStore.claim), it resolves to the claim's answer (AuditTrail.attemptWith is one).
 */
export type WriteAhead = (claim: (attempted: AuditEvent) => Promise<Claim>) => Promise<Claim>;

/**
 * How a claimed write ended, to be written with the request's terminal event, in one commit
 * (AuditTrail.concludeWith): `write` writes both; `hold`, when the database did not take them,
 * keeps them to write later and gives the error the request is answered with (undefined when they
 * are not kept: the request then fails as the write did).
 */
export interface ClaimEnding {
  readonly ending: WriteEnding;
  /** Resolves to the event as committed, when the store answers it. */
  write(event: AuditEvent): Promise<CommittedEvent | undefined>;
  writeAlone(): Promise<void>;
  hold(event: AuditEvent, error: unknown): DomainError | undefined;
}

/** Hands a claimed write's end to whatever writes the request's terminal event. */
export type WriteBehind = (ending: ClaimEnding) => void;

/** What a claimed write does beyond running its work. */
export interface RunOptions<T> {
  /** Commits the `attempted` event with the claim. */
  readonly writeAhead?: WriteAhead;
  /** Takes the write's end, to commit with the request's terminal event; without, it is written at once. */
  readonly writeBehind?: WriteBehind;
  /**
   * What else must be written for a result to stand (a new customer's tenancy): written with the
   * result, before it; and again when a held result is written late. It must be idempotent.
   */
  readonly settle?: (value: T, recordedBy: EventOrigin) => Promise<void>;
}

export interface Idempotent<T> {
  readonly value: T;
  readonly replayed: boolean;
}

/** The store's own outage error (DATABASE.UNAVAILABLE): the write may go through later. */
function isOutage(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'DATABASE.UNAVAILABLE';
}

/**
 * Runs a mutating operation at most once per reference (unique across the gateway, owned by the
 * client that first used it): a replay returns the stored result without running it, a different
 * body is refused (422), a duplicate while the first is in flight waits briefly for it, then 409.
 * Only results are stored; when the operation fails the reference is released so that the same
 * body may be retried — after an unknown outcome the retry reaches the provider with the same
 * reference, which is how the provider recognises it.
 *
 * With `writeBehind`, the result (or the release) is written with the request's terminal event,
 * in one commit; when the database does not take them, they are held in this process
 * (HeldOutcomes) and written when it answers again, and a retry meanwhile gets the result from
 * there on this replica, or from the database once written (docs/operations.md, "A database
 * outage").
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly options: IdempotencyOptions,
    private readonly metrics: Metrics,
    private readonly held: HeldOutcomes,
  ) {}

  /**
   * With `writeAhead`, its event commits with the claim, and `work` runs only once both are
   * committed. With `writeBehind`, the result or release is handed to it, to commit with the
   * request's terminal event; without, it is written at once.
   */
  async run<T>(key: IdempotencyKey, operation: string, fingerprint: string, work: () => Promise<T>, options: RunOptions<T> = {}): Promise<Idempotent<T>> {
    const { writeAhead, writeBehind, settle } = options;
    const replayed = await this.answerFromHeld<T>(key, operation, fingerprint);
    if (replayed) return replayed;

    const now = this.clock.now();
    const request: ClaimRequest = {
      key,
      operation,
      fingerprint,
      now,
      lockedUntil: new Date(now.getTime() + this.options.lockMs),
      expiresAt: new Date(now.getTime() + this.options.ttlMs),
    };
    const own: OwnClaim = { key, claimedAt: now };
    const claimOnce = () => (writeAhead ? writeAhead((attempted) => this.store.claim(request, attempted)) : this.store.claim(request));
    let claim: Claim;
    try {
      claim = await this.settled(claimOnce);
    } catch (error) {
      // The database went away during the claim: it may have committed it unseen. Nothing was sent:
      // its release (of this claim only) is written with the request's end, now or once it can be.
      if (writeBehind && isOutage(error)) writeBehind(this.ending(own, fingerprint, { kind: 'released' }));
      throw error;
    }
    switch (claim.kind) {
      case 'completed':
        this.metrics.idempotentReplay(operation);
        return { value: claim.result as T, replayed: true };
      case 'mismatch':
        throw new ReferenceReused();
      case 'taken':
        throw new ReferenceTaken();
      case 'in_flight':
        throw this.stillInFlight(claim.since);
      case 'claimed':
        break;
    }
    let value: T;
    try {
      value = await work();
    } catch (error) {
      await this.end(own, fingerprint, { kind: 'released' }, writeBehind);
      throw error;
    }
    await this.end(own, fingerprint, { kind: 'completed', result: value }, writeBehind, settle && ((recordedBy) => settle(value, recordedBy)));
    return { value, replayed: false };
  }

  purgeExpired(): Promise<number> {
    return this.store.purgeExpired(this.clock.now());
  }

  /** How long a result is kept to replay (IDEMPOTENCY_TTL_HOURS). */
  get keptForMs(): number {
    return this.options.ttlMs;
  }

  /** One operation's writes whose results are still kept (what a record rebuilt from them reads): IdempotencyStore.keptWrites. */
  keptWrites(operation: string, except: (references: string[]) => Promise<Set<string>>): Promise<KeptWrite[]> {
    return this.store.keptWrites(operation, except);
  }

  /** A kept result, opened: IdempotencyStore.keptResult. */
  keptResult(reference: string): Promise<KeptResult | undefined> {
    return this.store.keptResult(reference);
  }

  /**
   * A retry of a reference whose outcome this replica holds: the held outcome is written now if the
   * database takes it (and the store answers the retry); otherwise a held result is replayed from
   * memory, and a held release answers that the database is away.
   */
  private async answerFromHeld<T>(key: IdempotencyKey, operation: string, fingerprint: string): Promise<Idempotent<T> | undefined> {
    const outcome = this.held.find(key.reference);
    if (!outcome) return undefined;
    if (outcome.key.clientId !== key.clientId) throw new ReferenceTaken();
    if (outcome.fingerprint !== fingerprint) throw new ReferenceReused();
    if (await this.held.writeNow(key.reference)) return undefined;
    if (outcome.ending.kind === 'released') throw new DomainError('DATABASE.UNAVAILABLE', { retryAfterSeconds: 1 });
    this.metrics.idempotentReplay(operation);
    return { value: outcome.ending.result as T, replayed: true };
  }

  /**
   * Claims, and while another attempt holds the reference, looks again every 100 ms for up to
   * `settleWaitMs`: an attempt that ends meanwhile is answered from (its result, or its release,
   * which this request then claims). On another replica, an attempt whose end was held while the
   * database was away is written within a moment of its return: a retry then is answered with its
   * result, not told the attempt is in flight.
   */
  private async settled(claimOnce: () => Promise<Claim>): Promise<Claim> {
    const until = Date.now() + this.options.settleWaitMs;
    let claim = await claimOnce();
    while (claim.kind === 'in_flight' && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
      claim = await claimOnce();
    }
    return claim;
  }

  /**
   * An attempt still holds the reference: in flight while it may still be working (IN_FLIGHT, to
   * retry in a second); past that, its end is not recorded yet (OUTCOME_PENDING): the replica that
   * made it holds it until its database answers, or stopped, and the claim is taken over once its
   * lease ends.
   */
  private stillInFlight(since: Date): DomainError {
    const left = since.getTime() + this.options.workMs - this.clock.now().getTime();
    return left > 0 ? new ReferenceInFlight(Math.min(1, Math.ceil(left / 1000))) : new OutcomePending('elsewhere');
  }

  /** Writes the end at once, or hands it to the request's terminal event. */
  private async end(own: OwnClaim, fingerprint: string, ending: WriteEnding, writeBehind?: WriteBehind, settle?: Settle): Promise<void> {
    if (writeBehind) {
      writeBehind(this.ending(own, fingerprint, ending, settle));
      return;
    }
    if (ending.kind === 'completed') {
      await settle?.({});
      await this.store.complete(own, ending.result);
      return;
    }
    await this.store.release(own).catch((releaseError: unknown) => {
      // The claim then lapses at lockedUntil, after which a retry may take it over.
      this.logger.warn({ err: releaseError, reference: own.key.reference }, 'Could not release an idempotency key');
    });
  }

  /** `settle`: what else a completed write's result needs written, before the result (RunOptions.settle). */
  private ending(own: OwnClaim, fingerprint: string, ending: WriteEnding, settle?: Settle): ClaimEnding {
    const write = async (event: AuditEvent) => {
      if (ending.kind === 'released') return this.store.release(own, event);
      // What the result records is recorded by the request's terminal event: its partner event names it.
      await settle?.({ requestId: event.requestId, auditEventId: event.id });
      return this.store.complete(own, ending.result, event);
    };
    return {
      ending,
      write,
      writeAlone: async () => {
        if (ending.kind === 'released') return void (await this.store.release(own));
        await settle?.({});
        await this.store.complete(own, ending.result);
      },
      hold: (event, error) => {
        if (!isOutage(error)) return undefined;
        // What the partner is answered, in the event held: a result is pending; a release, the outage.
        const answer = ending.kind === 'completed' ? new OutcomePending('here', randomUUID()) : (error as DomainError);
        const answered: AuditEvent = {
          ...event,
          httpStatus: 503,
          errorCode: answer.code,
          errorMessage: answer.message,
          errorId: answer.errorId ?? event.errorId,
        };
        const outcome: HeldOutcome = {
          key: own.key,
          fingerprint,
          ending,
          event: answered,
          heldAt: this.clock.now().getTime(),
          write: async () => {
            await write(answered);
          },
        };
        return this.held.hold(outcome) ? answer : undefined;
      },
    };
  }
}
