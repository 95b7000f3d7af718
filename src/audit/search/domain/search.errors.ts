import { DomainError } from '../../../common/domain/domain-error';

export class AuditEventNotFound extends DomainError {
  constructor() {
    super('AUDIT.EVENT_NOT_FOUND');
  }
}
