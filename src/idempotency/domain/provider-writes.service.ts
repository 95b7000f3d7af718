import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { RequestSubject } from '../../common/domain/request-record';
import { AuditTrail } from '../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import type { EventOrigin } from '../../common/domain/event-origin';
import type { AuditOperation } from '../../common/domain/audit-operations';
import { fingerprintOf } from './idempotency';
import { Idempotent, IdempotencyService } from './idempotency.service';

/** What a write does with its result, besides storing it to replay. */
export interface WriteOptions<T> {
  /** Names what the result is about (a new customer's id), for the events still to come. */
  readonly about?: (result: T) => RequestSubject;
  /**
   * What must be written for the result to stand (a new customer's tenancy): written with the
   * result and the request's terminal event, and with them when they are held through a database
   * outage and written late, so that whatever the provider did is part of the outcome held.
   */
  readonly settle?: (result: T, recordedBy: EventOrigin) => Promise<void>;
}

/**
 * A write to the provider that has begun: its reference is chosen and the request's audit record
 * names what it is about. `once` makes it.
 */
export class PendingWrite {
  constructor(
    readonly operation: AuditOperation,
    /** What the request is about, its reference included. */
    readonly subject: RequestSubject & { readonly reference: string },
    private readonly idempotency: IdempotencyService,
    private readonly audit: AuditTrail,
  ) {}

  get reference(): string {
    return this.subject.reference;
  }

  /**
   * Makes `call` at most once per reference, for the client that first used it:
   * - the same body again is answered with the stored result (`replayed`), and nothing is called;
   * - another body is refused (ReferenceReused), another client too (ReferenceTaken), and a
   *   duplicate while the first is in flight (ReferenceInFlight);
   * - the `attempted` event is committed with the claim, in one statement, before the call
   *   (AuditUnavailable, or DATABASE.UNAVAILABLE in an outage, with no claim and no call, when it
   *   cannot be);
   * - when the provider says it has seen the reference and an earlier attempt with it never learned
   *   its outcome, the partner is told so (EarlierAttemptUnresolved), not that the provider refused;
   * - the result (or the claim's release) is committed with the request's terminal event, when the
   *   edge writes it (AuditTrail.concludeWith); when the database does not take them, they are
   *   held and written later, and the request is answered OUTCOME_PENDING (HeldOutcomes).
   * `body` is what the partner sent, with the reference: its fingerprint tells a replay from a reuse.
   */
  async once<T>(caller: AuthenticatedClient, body: object, call: () => Promise<T>, options: WriteOptions<T> = {}): Promise<Idempotent<T>> {
    const result = await this.idempotency.run(
      { clientId: caller.id, reference: this.reference },
      this.operation,
      fingerprintOf(this.operation, { ...body }),
      () => this.audit.calling(this.reference, call),
      {
        writeAhead: (claim) => this.audit.attemptWith(this.operation, this.subject, claim, (answer) => answer.kind === 'claimed'),
        writeBehind: (ending) => this.audit.concludeWith(ending),
        settle: options.settle,
      },
    );
    if (options.about) this.audit.about(options.about(result.value));
    return result;
  }
}

/** The one way a feature writes to the provider: recorded first, made once per reference (PendingWrite.once). */
@Injectable()
export class ProviderWrites {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Begins a write for the request being served: the partner's reference, or a new one, and what
   * the request is about, noted at once so that every event it leaves (a refusal included) names them.
   */
  begin(operation: AuditOperation, subject: RequestSubject): PendingWrite {
    const pending = new PendingWrite(operation, { ...subject, reference: subject.reference ?? randomUUID() }, this.idempotency, this.audit);
    this.audit.about(pending.subject);
    return pending;
  }
}
