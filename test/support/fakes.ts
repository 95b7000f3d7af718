import type { KeptResult, KeptWrite } from '../../src/idempotency/domain/idempotency-store.port';
import { BankAccountPage, BankAccountRecords, FoundBankAccount, RecordOrigin } from '../../src/partner-api/bank-accounts/domain/bank-account-records.port';
import type { BankAccount } from '../../src/partner-api/bank-accounts/domain/bank-account.gateway.port';
import { CustomerDirectory, CustomerPage, CustomerRecord } from '../../src/partner-api/customers/domain/customer-directory.port';
import { useContainer } from 'class-validator';
import { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import { DocumentExpiryConstraint } from '../../src/partner-api/bank-accounts/http/document-expiry.validator';
import { PastCalendarDateConstraint } from '../../src/common/http/date.validators';
import { AuditLog, CommittedEvent, StoreWrite } from '../../src/audit/trail/domain/audit-log.port';
import { UnresolvedCall, UnresolvedPage, UnresolvedQuery } from '../../src/audit/trail/domain/unresolved-call';
import { Clock } from '../../src/common/domain/clock.port';
import { Metrics } from '../../src/common/domain/metrics.port';
import { Binding, CustomerOwner, CustomerOwnership, OwnershipOrigin } from '../../src/partner-api/customers/domain/customer-ownership.port';
import { CustomerNotFound } from '../../src/partner-api/customers/domain/customers.errors';
import { ProofReplay } from '../../src/auth/domain/proof-replay.port';
import { Claim } from '../../src/idempotency/domain/idempotency';
import { ClaimRequest, IdempotencyStore, OwnClaim } from '../../src/idempotency/domain/idempotency-store.port';
import { IdempotencyOptions, IdempotencyService } from '../../src/idempotency/domain/idempotency.service';
import { HeldOutcomes } from '../../src/idempotency/domain/held-outcomes';
import { DomainError } from '../../src/common/domain/domain-error';

/**
 * Small in-memory fakes of the ports, for unit specs of the domain services (the "small" tier).
 * Persistence behaviour itself is tested against real PostgreSQL; these only stand in for it where
 * a service's own logic is under test.
 */
/** "Now" is whatever `current` says (2027-01-31T15:00Z, a month's end, unless told otherwise). */
export class FixedClock extends Clock {
  constructor(public current: Date = new Date('2027-01-31T15:00:00Z')) {
    super();
  }

  now(): Date {
    return this.current;
  }
}

/** Keeps what was appended, in order; `failing` makes every append reject, and so does an event id it holds. */
export class InMemoryAuditLog extends AuditLog {
  readonly events: AuditEvent[] = [];
  failing = false;

  append(event: AuditEvent): Promise<void> {
    if (this.failing) return Promise.reject(new Error('audit store down'));
    // As the table's primary key does.
    if (this.events.some((held) => held.id === event.id)) return Promise.reject(new Error(`duplicate audit event id ${event.id}`));
    this.events.push(event);
    return Promise.resolve();
  }

  /** Runs no SQL: the in-memory idempotency store appends its write-ahead event itself (see InMemoryIdempotencyStore). */
  appendAlong(event: AuditEvent, write: StoreWrite): Promise<boolean> {
    return Promise.reject(new Error(`the in-memory audit log runs no statement (${write.sql.trim().slice(0, 20)}…) for ${event.phase}`));
  }

  /** The same: the in-memory idempotency store appends its terminal events itself. */
  appendWith(event: AuditEvent, write: StoreWrite): Promise<{ written: boolean; committed?: CommittedEvent }> {
    return this.appendAlong(event, write).then((written) => ({ written }));
  }

  /** The same rule as the repository's query, without paging. */
  unresolved(query: UnresolvedQuery): Promise<UnresolvedPage> {
    const of = (attempt: AuditEvent) => this.events.filter((e) => e.requestId === attempt.requestId && e.phase !== 'attempted');
    const calls = this.events
      .filter((e) => e.phase === 'attempted' && e.reference !== undefined && e.occurredAt < query.attemptedBefore)
      .filter((e) => (query.reference === undefined || e.reference === query.reference) && e.requestId !== query.exceptRequestId)
      .filter((e) => !of(e).some((t) => t.phase === 'rejected' || t.phase === 'failed'))
      .filter((e) => !this.events.some((s) => s.reference === e.reference && s.phase === 'succeeded'))
      .reverse()
      .slice(0, query.limit)
      .map((e): UnresolvedCall => {
        const unknown = of(e).find((t) => t.phase === 'unknown');
        return {
          operation: e.operation,
          reference: e.reference!,
          customerId: e.customerId,
          clientId: e.clientId,
          clientName: e.clientName,
          attemptedAt: e.occurredAt,
          requestId: e.requestId,
          state: unknown ? 'unknown' : 'no_outcome',
          errorId: unknown?.errorId,
          position: { occurredAt: e.occurredAt.toISOString(), id: e.id },
        };
      });
    return Promise.resolve({ calls });
  }
}

/** Counts what it is told. */
export class CountingMetrics extends Metrics {
  readonly replays: string[] = [];
  auditFailures = 0;

  requestServed(): void {}
  upstreamCall(): void {}
  upstreamCircuit(): void {}
  auditWriteFailed(): void {
    this.auditFailures++;
  }
  idempotentReplay(operation: string): void {
    this.replays.push(operation);
  }
  /** The last count of held outcomes reported. */
  held = 0;
  readonly writtenLate: number[] = [];
  outcomesHeld(count: number): void {
    this.held = count;
  }
  outcomeWrittenLate(heldSeconds: number): void {
    this.writtenLate.push(heldSeconds);
  }
  auditSealer(): void {}
  errorAnswered(): void {}
  readonly unresolved: number[] = [];
  unresolvedCalls(count: number): void {
    this.unresolved.push(count);
  }
  breakGlassUsed(): void {}
  readiness(): void {}
}

export class InMemoryCustomerOwnership extends CustomerOwnership {
  readonly owners = new Map<string, { tenant: string; endUser?: string; at: number }>();
  private order = 0;

  ownerOf(customerId: string): Promise<CustomerOwner | undefined> {
    const owner = this.owners.get(customerId);
    return Promise.resolve(owner && (owner.endUser === undefined ? { tenant: owner.tenant } : { tenant: owner.tenant, endUser: owner.endUser }));
  }

  assign(customerId: string, tenant: string, _origin: OwnershipOrigin, endUser?: string): Promise<string> {
    if (!this.owners.has(customerId)) this.owners.set(customerId, { tenant, endUser, at: this.order++ });
    return Promise.resolve(this.owners.get(customerId)!.tenant);
  }

  bind(customerId: string, tenant: string, endUser: string): Promise<Binding> {
    const owner = this.owners.get(customerId);
    if (!owner || owner.tenant !== tenant) return Promise.reject(new CustomerNotFound());
    if (owner.endUser === undefined) {
      owner.endUser = endUser;
      return Promise.resolve('bound');
    }
    return Promise.resolve(owner.endUser === endUser ? 'unchanged' : 'taken');
  }

  customersOf(tenant: string, endUser: string): Promise<string[]> {
    return Promise.resolve(
      [...this.owners.entries()]
        .filter(([, owner]) => owner.tenant === tenant && owner.endUser === endUser)
        .sort(([, a], [, b]) => a.at - b.at)
        .map(([customerId]) => customerId),
    );
  }
}

/** Records accounts as the service hands them over; reads belong to PostgreSQL (test/medium, test/e2e), and are refused here. */
export class RecordingBankAccountRecords extends BankAccountRecords {
  readonly recorded: { account: BankAccount; tenant: string; origin: RecordOrigin }[] = [];

  record(account: BankAccount, tenant: string, origin: RecordOrigin): Promise<void> {
    if (!this.recorded.some((row) => row.account.id === account.id)) this.recorded.push({ account, tenant, origin });
    return Promise.resolve();
  }

  find(): Promise<FoundBankAccount | undefined> {
    return Promise.reject(new Error('Reads are PostgreSQL’s: see test/e2e/partner-resources.e2e-spec.ts'));
  }

  list(): Promise<BankAccountPage> {
    return Promise.reject(new Error('Reads are PostgreSQL’s: see test/e2e/partner-resources.e2e-spec.ts'));
  }
}

/** The customers' read side is PostgreSQL's (test/e2e/partner-resources.e2e-spec.ts): unit tests of writes never read it. */
export class UnreadCustomerDirectory extends CustomerDirectory {
  find(): Promise<CustomerRecord | undefined> {
    return Promise.reject(new Error('Reads are PostgreSQL’s: see test/e2e/partner-resources.e2e-spec.ts'));
  }

  list(): Promise<CustomerPage> {
    return Promise.reject(new Error('Reads are PostgreSQL’s: see test/e2e/partner-resources.e2e-spec.ts'));
  }
}

interface KeyRow {
  clientId: string;
  fingerprint: string;
  state: 'in_flight' | 'completed' | 'retryable';
  claimedAt: Date;
  lockedUntil: Date;
  result?: unknown;
}

/** The error the PostgreSQL stores throw while the database does not answer. */
export const databaseDown = () => new DomainError('DATABASE.UNAVAILABLE', { retryAfterSeconds: 5 });

/**
 * The store's contract (docs/decisions.md, Idempotency) without its concurrency, which PostgreSQL
 * tests cover. A claim's write-ahead event goes to `audit`, and the claim is kept only once it is
 * appended (both or neither).
 */
export class InMemoryIdempotencyStore extends IdempotencyStore {
  readonly rows = new Map<string, KeyRow>();
  failRelease = false;
  /** Every call rejects as the PostgreSQL store does while its database does not answer. */
  down = false;

  constructor(private readonly audit?: InMemoryAuditLog) {
    super();
  }

  async claim(request: ClaimRequest, attempted?: AuditEvent): Promise<Claim> {
    if (this.down) throw databaseDown();
    const held = this.rows.get(request.key.reference);
    const abandoned = held?.state === 'in_flight' && held.lockedUntil <= request.now;
    const mayTakeOver = held && held.clientId === request.key.clientId && held.fingerprint === request.fingerprint && (held.state === 'retryable' || abandoned);
    if (!held || mayTakeOver) {
      // Held before the event is appended, so that a claim arriving meanwhile finds it; given back when the append fails.
      this.rows.set(request.key.reference, {
        clientId: request.key.clientId,
        fingerprint: request.fingerprint,
        state: 'in_flight',
        claimedAt: request.now,
        lockedUntil: request.lockedUntil,
      });
      if (attempted) {
        try {
          if (!this.audit) throw new Error('InMemoryIdempotencyStore needs the audit log its claims append to');
          await this.audit.append(attempted);
        } catch (error) {
          if (held) this.rows.set(request.key.reference, held);
          else this.rows.delete(request.key.reference);
          throw error;
        }
      }
      return { kind: 'claimed' };
    }
    if (held.clientId !== request.key.clientId) return { kind: 'taken' };
    if (held.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
    return held.state === 'completed' ? { kind: 'completed', result: held.result } : { kind: 'in_flight', since: held.claimedAt };
  }

  /** No event as committed is answered: the in-memory log computes no seal hash (receipts are PostgreSQL's, tested there). */
  async complete(claim: OwnClaim, result: unknown, concluded?: AuditEvent): Promise<CommittedEvent | undefined> {
    if (this.down) throw databaseDown();
    if (concluded) await this.appendConcluded(concluded);
    const row = this.rows.get(claim.key.reference);
    if (row && row.clientId === claim.key.clientId) this.rows.set(claim.key.reference, { ...row, state: 'completed', result });
    return undefined;
  }

  async release(claim: OwnClaim, concluded?: AuditEvent): Promise<CommittedEvent | undefined> {
    if (this.down) throw databaseDown();
    if (this.failRelease) throw new Error('database down');
    if (concluded) await this.appendConcluded(concluded);
    const row = this.rows.get(claim.key.reference);
    if (row && row.clientId === claim.key.clientId && row.state === 'in_flight' && row.claimedAt.getTime() === claim.claimedAt.getTime()) {
      this.rows.set(claim.key.reference, { ...row, state: 'retryable' });
    }
    return undefined;
  }

  private async appendConcluded(event: AuditEvent): Promise<void> {
    if (!this.audit) throw new Error('InMemoryIdempotencyStore needs the audit log its ends append to');
    await this.audit.append(event);
  }

  purgeExpired(): Promise<number> {
    return Promise.resolve(0);
  }

  keptWrites(): Promise<KeptWrite[]> {
    return Promise.resolve(
      [...this.rows.entries()]
        .filter(([, row]) => row.state === 'completed')
        .map(([reference, row]) => ({ reference, createdAt: row.claimedAt, clientId: row.clientId })),
    );
  }

  keptResult(reference: string): Promise<KeptResult | undefined> {
    const row = this.rows.get(reference);
    return Promise.resolve(row?.state === 'completed' ? { result: row.result } : undefined);
  }
}

/** Takes the place of Nest's logger (Logger.overrideLogger) and keeps what was logged, by level. */
export class RecordingLogger {
  readonly lines: { level: string; message: unknown; context: unknown[] }[] = [];
  log = (message: unknown, ...context: unknown[]) => this.lines.push({ level: 'log', message, context });
  error = (message: unknown, ...context: unknown[]) => this.lines.push({ level: 'error', message, context });
  warn = (message: unknown, ...context: unknown[]) => this.lines.push({ level: 'warn', message, context });
  debug = (message: unknown, ...context: unknown[]) => this.lines.push({ level: 'debug', message, context });
  verbose = (message: unknown, ...context: unknown[]) => this.lines.push({ level: 'verbose', message, context });
}

/**
 * class-validator's container for a DTO spec: the constraints that need the Clock get this one (as
 * Nest's container gives them the real one), every other constraint its own instance.
 */
export function useValidationClock(clock: Clock): void {
  const instances = new Map<unknown, unknown>([
    [DocumentExpiryConstraint, new DocumentExpiryConstraint(clock)],
    [PastCalendarDateConstraint, new PastCalendarDateConstraint(clock)],
  ]);
  useContainer({ get: <T>(type: new () => T): T => (instances.get(type) as T | undefined) ?? new type() });
}

/** DPoP proofs used, in memory (the PostgreSQL one keeps the same contract: test/contracts/proof-replay.contract.ts). */
export class InMemoryProofReplay extends ProofReplay {
  readonly used = new Map<string, number>();

  useOnce(key: string, expiresAt: Date): Promise<boolean> {
    const until = this.used.get(key);
    if (until !== undefined && until >= Date.now()) return Promise.resolve(false);
    this.used.set(key, expiresAt.getTime());
    return Promise.resolve(true);
  }
}

/**
 * An IdempotencyService over `store` as the module makes one, with options a unit spec can read:
 * a day's keys, a minute's lease, 30 s of work, and no wait for an attempt in flight unless told.
 */
export function idempotencyService(
  store: IdempotencyStore,
  clock: Clock,
  metrics: Metrics,
  options: Partial<IdempotencyOptions> = {},
): { service: IdempotencyService; held: HeldOutcomes } {
  const held = new HeldOutcomes(
    { max: 100, retryEveryMs: 20 },
    (error) => error instanceof DomainError && error.code === 'DATABASE.UNAVAILABLE',
    clock,
    metrics,
  );
  const service = new IdempotencyService(store, clock, { ttlMs: 86_400_000, lockMs: 60_000, workMs: 30_000, settleWaitMs: 0, ...options }, metrics, held);
  return { service, held };
}
