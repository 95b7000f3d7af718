import { DomainError } from '../../common/domain/domain-error';

/** The audit log cannot be written: the request is refused rather than left unrecorded. */
export class AuditUnavailable extends DomainError {
  constructor(cause?: unknown) {
    super('AUDIT.UNAVAILABLE', 'unavailable', 'The service cannot record requests right now; try again shortly', {
      details: 'Every request is recorded before it is acted on, and the record could not be written. Nothing was sent to the provider.',
      retryAfterSeconds: 5,
      cause,
    });
  }
}

export class AuditEventNotFound extends DomainError {
  constructor() {
    super('AUDIT.EVENT_NOT_FOUND', 'not_found', 'There is no audit event with this id');
  }
}

export class InvalidAuditCursor extends DomainError {
  constructor() {
    super('AUDIT.INVALID_CURSOR', 'invalid_input', 'The cursor is not one this service issued', {
      fields: [{ field: 'cursor', message: 'cursor must be a value returned as next_cursor' }],
    });
  }
}

export class InvalidAuditRange extends DomainError {
  constructor() {
    super('AUDIT.INVALID_RANGE', 'invalid_input', 'from must be before to', {
      fields: [{ field: 'from', message: 'from must be before to' }],
    });
  }
}
