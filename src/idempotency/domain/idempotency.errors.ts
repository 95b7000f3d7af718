import { DomainError } from '../../common/domain/domain-error';

/** Another request with the reference is being worked on now: retry in `retryAfterSeconds` (no longer than what is left of it). */
export class ReferenceInFlight extends DomainError {
  constructor(retryAfterSeconds = 1) {
    super('IDEMPOTENCY.IN_FLIGHT', {
      details: 'Retry after the Retry-After delay with the same body to get its result.',
      retryAfterSeconds,
    });
  }
}

/**
 * The outcome of a request with the reference is not recorded yet. `here`: this request's own
 * write, whose provider answer the gateway holds while its database does not answer (the 503 under
 * `errorId`, which the held audit event names). `elsewhere`: an earlier request's, which ended and
 * whose end is not recorded: the replica that made it holds it, or stopped (its claim is then
 * taken over once its lease ends).
 */
export class OutcomePending extends DomainError {
  constructor(where: 'here' | 'elsewhere', errorId?: string) {
    super('IDEMPOTENCY.OUTCOME_PENDING', {
      details:
        where === 'here'
          ? 'The provider answered, and the gateway holds its answer but could not record it (its database did not answer). ' +
            'The operation may have completed: retry with the same reference and body, and the retry returns its result once it is recorded.'
          : 'An earlier request with this reference has ended, and its outcome is not recorded yet. ' +
            'Retry with the same reference and body: you get its result once it is recorded, or the request is made again once the earlier claim lapses.',
      retryAfterSeconds: 1,
      errorId,
    });
  }
}

export class ReferenceReused extends DomainError {
  constructor() {
    super('IDEMPOTENCY.REFERENCE_REUSED', {
      details: 'A reference identifies one transaction: send a new reference for a different request.',
      fields: [{ field: 'reference', message: 'reference was already used with a different body' }],
    });
  }
}

/**
 * 422, like a reference reused with another body: the reference cannot become valid by waiting
 * (a 409 would invite retries), and the caller's fix is the same — a new reference.
 */
export class ReferenceTaken extends DomainError {
  constructor() {
    super('IDEMPOTENCY.REFERENCE_TAKEN', {
      details: 'References are unique across the gateway (the provider has one namespace for all clients): send a new reference.',
      fields: [{ field: 'reference', message: 'reference was already used by another client' }],
    });
  }
}
