import { DomainError } from '../../common/domain/domain-error';

export class ReferenceInFlight extends DomainError {
  constructor() {
    super('IDEMPOTENCY.IN_FLIGHT', {
      details: 'Retry after the Retry-After delay with the same body to get its result.',
      retryAfterSeconds: 1,
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
