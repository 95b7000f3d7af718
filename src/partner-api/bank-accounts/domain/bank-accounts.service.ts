import { Injectable } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import { decodeCursor, encodeCursor, InvalidRange, isEmptyRange } from '../../../common/domain/list-cursor';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { CustomerNotFound } from '../../customers/domain/customers.errors';
import { Idempotent } from '../../../idempotency/domain/idempotency.service';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import { BankAccount, BankAccountCurrency, BankAccountGateway, OpenBankAccount } from './bank-account.gateway.port';
import { BankAccountRecords, FoundBankAccount, ListedBankAccount, RecordedBankAccount } from './bank-account-records.port';
import { isAccountId } from '../../../common/domain/identifiers';
import { BankAccountNotFound } from './bank-accounts.errors';

/** What the bank-accounts slice's requests are audited as (`audit_events.operation`). */
export const BANK_ACCOUNT_OPERATIONS = { open: 'bank_account.create', read: 'bank_account.read', list: 'bank_account.list' } as const;

/** What an end user's access token must grant to call them. */
export const BANK_ACCOUNT_SCOPES = { open: 'bank_accounts:write', read: 'bank_accounts:read' } as const;

export type BankAccountRequest = Omit<OpenBankAccount, 'reference'> & { readonly reference?: string };

export interface BankAccountQuery {
  readonly customerId?: string;
  readonly currency?: BankAccountCurrency;
  /** Instants as ISO 8601 text (list-query.dto.ts has checked them). */
  readonly from?: string;
  readonly to?: string;
}

export interface BankAccountListing {
  readonly accounts: readonly ListedBankAccount[];
  readonly nextCursor?: string;
}

@Injectable()
export class BankAccountsService {
  constructor(
    private readonly gateway: BankAccountGateway,
    private readonly customers: CustomerTenancy,
    private readonly writes: ProviderWrites,
    private readonly records: BankAccountRecords,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Opens an EUR or GBP account for one of the caller's tenant's customers, once per reference.
   * The request has passed the DTO rules (the expiry rule among them) before it gets here. The
   * account is recorded with the outcome (and with it when the outcome is held through an outage).
   */
  async open(caller: AuthenticatedClient, request: BankAccountRequest): Promise<Idempotent<BankAccount>> {
    const write = this.writes.begin(BANK_ACCOUNT_OPERATIONS.open, {
      reference: request.reference,
      customerId: request.customerId,
      currency: request.currency,
    });
    await this.customers.assertVisibleTo(caller, request.customerId);
    const command: OpenBankAccount = { ...request, reference: write.reference };
    return write.once(caller, command, () => this.gateway.open(command), {
      // Under the customer it was opened for, the caller's (the adapter answers it, whatever id the provider's answer names).
      settle: (account, recordedBy) => this.records.record({ ...account, customerId: command.customerId }, caller.tenant, 'opened', undefined, recordedBy),
    });
  }

  /** One of the caller's accounts, its identifiers in full. @throws BankAccountNotFound for anyone else's. */
  async read(caller: AuthenticatedClient, id: string): Promise<RecordedBankAccount> {
    return (await this.visible(caller, id)).withIdentifiers();
  }

  /**
   * One of the caller's accounts, its identifiers still sealed: found by the caller's tenant and
   * held to the caller's customers before anything is opened. @throws BankAccountNotFound for anyone else's.
   */
  async visible(caller: AuthenticatedClient, id: string): Promise<FoundBankAccount> {
    const account = isAccountId(id) ? await this.records.find(id, caller.tenant) : undefined;
    if (!account) throw new BankAccountNotFound();
    this.audit.about({ customerId: account.customerId, currency: account.currency });
    await this.customers.assertVisibleTo(caller, account.customerId).catch((error: unknown) => {
      throw error instanceof CustomerNotFound ? new BankAccountNotFound() : error;
    });
    return account;
  }

  /**
   * The caller's accounts, newest first, a page at a time (an end user: those of their own
   * customers). A customer named that is not the caller's is CustomerNotFound, never an empty list.
   */
  async list(caller: AuthenticatedClient, query: BankAccountQuery, limit: number, cursor?: string): Promise<BankAccountListing> {
    if (isEmptyRange(query)) throw new InvalidRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor, isAccountId);
    if (query.customerId) {
      this.audit.about({ customerId: query.customerId });
      await this.customers.assertVisibleTo(caller, query.customerId);
    }
    const page = await this.records.list({ ...query, tenant: caller.tenant, ...(caller.role === 'end_user' ? { endUser: caller.id } : {}) }, limit, after);
    return { accounts: page.accounts, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }
}
