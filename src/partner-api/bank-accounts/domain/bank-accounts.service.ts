import { Injectable } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { Idempotent } from '../../../idempotency/domain/idempotency.service';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import { BankAccount, BankAccountGateway, OpenBankAccount } from './bank-account.gateway.port';

/** What the bank-accounts slice's requests are audited as (`audit_events.operation`). */
export const BANK_ACCOUNT_OPERATIONS = { open: 'bank_account.create' } as const;

/** What an end user's access token must grant to call them. */
export const BANK_ACCOUNT_SCOPES = { open: 'bank_accounts:write' } as const;

export type BankAccountRequest = Omit<OpenBankAccount, 'reference'> & { readonly reference?: string };

@Injectable()
export class BankAccountsService {
  constructor(
    private readonly gateway: BankAccountGateway,
    private readonly customers: CustomerTenancy,
    private readonly writes: ProviderWrites,
  ) {}

  /**
   * Opens an EUR or GBP account for one of the caller's tenant's customers, once per reference.
   * The request has passed the DTO rules (the expiry rule among them) before it gets here.
   */
  async open(caller: AuthenticatedClient, request: BankAccountRequest): Promise<Idempotent<BankAccount>> {
    const write = this.writes.begin(BANK_ACCOUNT_OPERATIONS.open, {
      reference: request.reference,
      customerId: request.customerId,
      currency: request.currency,
    });
    await this.customers.assertVisibleTo(caller, request.customerId);
    const command: OpenBankAccount = { ...request, reference: write.reference };
    return write.once(caller, command, () => this.gateway.open(command));
  }
}
