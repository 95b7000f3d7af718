import { DomainError } from '../../../common/domain/domain-error';

/** The provider answered another currency than the one asked for: no balance in the wrong currency is shown. */
export class BalanceNotFound extends DomainError {
  constructor(asked: string, answered: string) {
    super('BALANCE.NOT_FOUND', { details: `Asked for ${asked}; the provider has this customer's balance in ${answered} only` });
  }
}
