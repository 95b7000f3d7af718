import { DomainError } from '../../../common/domain/domain-error';

/**
 * The audit log cannot be written: the request is refused rather than left unrecorded. A write
 * whose `attempted` event could not be written was not sent; one whose end could not be written
 * nor held (HeldOutcomes full, or refused for good) was, and its retry finds its result or, once
 * its claim lapses, reaches the provider with the same reference.
 */
export class AuditUnavailable extends DomainError {
  constructor(cause?: unknown) {
    super('AUDIT.UNAVAILABLE', {
      details: 'Every request is recorded before it is acted on, and the record could not be written.',
      retryAfterSeconds: 5,
      cause,
    });
  }
}

/**
 * The provider has already seen this reference, and the gateway's only earlier attempt with it
 * never learned its outcome (the process ended mid-call, or the provider did not answer in time).
 * So the earlier request reached the provider, and its answer cannot be replayed: a retry cannot
 * find it out, and a new reference might do the work twice. 409 without Retry-After: waiting
 * does not help; support settles it (docs/operations.md, "Calls whose outcome is unknown").
 */
export class EarlierAttemptUnresolved extends DomainError {
  constructor(cause: unknown) {
    super('IDEMPOTENCY.OUTCOME_UNKNOWN', {
      details:
        'The gateway never received the provider’s answer to that request, so it cannot replay it, and the provider will not take the reference again. ' +
        'Do not retry, and do not resend with a new reference (that could do the work twice): ask support to settle it, quoting this error id.',
      cause,
    });
  }
}
