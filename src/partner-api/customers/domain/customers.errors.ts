import { DomainError } from '../../../common/domain/domain-error';

/** A partner server binds a customer to an end user while it is another end user's. */
export class CustomerAlreadyBound extends DomainError {
  constructor() {
    super('CUSTOMER.ALREADY_BOUND', { details: 'A customer belongs to one end user at most; nothing changed' });
  }
}

/** Also what another tenant's customer looks like: its existence is not revealed. */
export class CustomerNotFound extends DomainError {
  constructor() {
    super('CUSTOMER.NOT_FOUND');
  }
}
