import { DomainError } from '../../../common/domain/domain-error';

/** Also what another tenant's account looks like, or another end user's: its existence is not revealed. */
export class BankAccountNotFound extends DomainError {
  constructor() {
    super('BANK_ACCOUNT.NOT_FOUND');
  }
}
