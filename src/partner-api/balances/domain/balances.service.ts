import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { BankAccountsService } from '../../bank-accounts/domain/bank-accounts.service';
import type { BankAccountCurrency } from '../../bank-accounts/domain/bank-account.gateway.port';
import { Balance, BalanceGateway } from './balance.gateway.port';
import { BalanceNotFound } from './balances.errors';

/** What the balances slice's requests are audited as (`audit_events.operation`). */
export const BALANCE_OPERATIONS = { read: 'balance.read', readAccount: 'balance.read_account' } as const;

/** What an end user's access token must grant to call them. */
export const BALANCE_SCOPES = { read: 'balances:read' } as const;

@Injectable()
export class BalancesService {
  constructor(
    private readonly gateway: BalanceGateway,
    private readonly customers: CustomerTenancy,
    private readonly audit: AuditTrail,
    private readonly accounts: BankAccountsService,
  ) {}

  /**
   * The balance of one of the caller's tenant's customers; CustomerNotFound for anyone else's. In
   * `currency` when given; otherwise in the currency the provider chooses, which the balance says
   * (no extra read on the hot path to guess it).
   * @throws BalanceNotFound when the provider answers in another currency than the one wanted.
   */
  async read(caller: AuthenticatedClient, customerId: string, currency?: BankAccountCurrency): Promise<Balance> {
    this.audit.about({ customerId, ...(currency ? { currency } : {}) });
    await this.customers.assertVisibleTo(caller, customerId);
    return this.inCurrency(customerId, currency);
  }

  /** The balance of one of the caller's accounts: its customer's, in its currency. @throws BankAccountNotFound for anyone else's. */
  async readAccount(caller: AuthenticatedClient, accountId: string): Promise<Balance> {
    const account = await this.accounts.visible(caller, accountId);
    return this.inCurrency(account.customerId, account.currency);
  }

  private async inCurrency(customerId: string, currency: string | undefined): Promise<Balance> {
    const balance = await this.gateway.read(customerId, currency);
    this.audit.about({ currency: balance.currency });
    if (currency !== undefined && balance.currency !== currency) throw new BalanceNotFound(currency, balance.currency);
    return balance;
  }
}
