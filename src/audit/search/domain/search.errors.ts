import { DomainError } from '../../../common/domain/domain-error';

export class AuditEventNotFound extends DomainError {
  constructor() {
    super('AUDIT.EVENT_NOT_FOUND');
  }
}

export class InvalidAuditCursor extends DomainError {
  constructor() {
    super('AUDIT.INVALID_CURSOR', {
      fields: [{ field: 'cursor', message: 'cursor must be a value returned as next_cursor' }],
    });
  }
}

export class InvalidAuditRange extends DomainError {
  constructor(message = 'from must be before to') {
    super('AUDIT.INVALID_RANGE', message, {
      fields: [{ field: 'from', message }],
    });
  }
}
