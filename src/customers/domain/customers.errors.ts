import { DomainError } from '../../common/domain/domain-error';

/** Also what another tenant's customer looks like: its existence is not revealed. */
export class CustomerNotFound extends DomainError {
  constructor() {
    super('CUSTOMER.NOT_FOUND');
  }
}
