import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/domain/clock.port';
import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import { Claim, IdempotencyKey } from './idempotency';
import { ClaimRequest, IdempotencyStore } from './idempotency-store.port';
import { ReferenceInFlight, ReferenceReused, ReferenceTaken } from './idempotency.errors';
import { Metrics } from '../../common/domain/metrics.port';

/** Provided by the module from configuration. */
export abstract class IdempotencyOptions {
  abstract readonly ttlMs: number;
  /** How long a claim may stay in flight before another attempt may take it over. */
  abstract readonly lockMs: number;
}

/**
 * Commits a write-ahead event with the claim: given the claim, which appends the event it is passed
 * (IdempotencyStore.claim), it resolves to the claim's answer (AuditTrail.attemptWith is one).
 */
export type WriteAhead = (claim: (attempted: AuditEvent) => Promise<Claim>) => Promise<Claim>;

export interface Idempotent<T> {
  readonly value: T;
  readonly replayed: boolean;
}

/**
 * Runs a mutating operation at most once per reference (unique across the gateway, owned by the
 * client that first used it): a replay returns the stored
 * result without running it, a different body is refused (422), a concurrent duplicate waits (409).
 * Only results are stored; when the operation fails the reference is released so that the same
 * body may be retried — after an unknown outcome the retry reaches the provider with the same
 * reference, which is how the provider recognises it.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly options: IdempotencyOptions,
    private readonly metrics: Metrics,
  ) {}

  /** With `writeAhead`, its event commits with the claim, and `work` runs only once both are committed. */
  async run<T>(key: IdempotencyKey, operation: string, fingerprint: string, work: () => Promise<T>, writeAhead?: WriteAhead): Promise<Idempotent<T>> {
    const now = this.clock.now();
    const request: ClaimRequest = {
      key,
      operation,
      fingerprint,
      now,
      lockedUntil: new Date(now.getTime() + this.options.lockMs),
      expiresAt: new Date(now.getTime() + this.options.ttlMs),
    };
    const claim = writeAhead ? await writeAhead((attempted) => this.store.claim(request, attempted)) : await this.store.claim(request);
    switch (claim.kind) {
      case 'completed':
        this.metrics.idempotentReplay(operation);
        return { value: claim.result as T, replayed: true };
      case 'mismatch':
        throw new ReferenceReused();
      case 'taken':
        throw new ReferenceTaken();
      case 'in_flight':
        throw new ReferenceInFlight();
      case 'claimed':
        break;
    }
    let value: T;
    try {
      value = await work();
    } catch (error) {
      await this.store.release(key).catch((releaseError: unknown) => {
        // The claim then lapses at lockedUntil, after which a retry may take it over.
        this.logger.warn({ err: releaseError, reference: key.reference }, 'Could not release an idempotency key');
      });
      throw error;
    }
    await this.store.complete(key, value);
    return { value, replayed: false };
  }

  purgeExpired(): Promise<number> {
    return this.store.purgeExpired(this.clock.now());
  }
}
