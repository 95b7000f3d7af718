import { DomainError } from '../../../common/domain/domain-error';

export class InvalidUnresolvedWindow extends DomainError {
  constructor() {
    super('AUDIT.INVALID_RANGE', 'since must reach further back than older_than', {
      fields: [{ field: 'since', message: 'since must be longer ago than older_than' }],
    });
  }
}
