import type { EventOrigin } from '../../../common/domain/event-origin';
import type { ListPosition } from '../../../common/domain/list-cursor';
import type { BankAccount, BankAccountCurrency } from './bank-account.gateway.port';

/** How an account came to be recorded: opened through the service, or rebuilt from what it held before accounts were recorded. */
export type RecordOrigin = 'opened' | 'reconstructed';

/** An account as the service recorded it, its identifiers opened: what its single read shows. */
export interface RecordedBankAccount extends BankAccount {
  readonly tenant: string;
  readonly createdAt: string;
}

/** An account as it was found: opened only once the caller is known to be allowed it. */
export interface FoundBankAccount extends Omit<RecordedBankAccount, 'iban' | 'sortCode' | 'accountNumber'> {
  /** The account with its identifiers opened. */
  withIdentifiers(): Promise<RecordedBankAccount>;
}

/** An account as a list shows it: its identifiers masked to their last four characters. */
export interface ListedBankAccount extends Omit<BankAccount, 'iban' | 'sortCode' | 'accountNumber'> {
  readonly createdAt: string;
  readonly last4: string;
  readonly position: ListPosition;
}

export interface BankAccountFilter {
  readonly tenant: string;
  /** An end user's pseudonym: only accounts of their own customers. */
  readonly endUser?: string;
  readonly customerId?: string;
  readonly currency?: BankAccountCurrency;
  /** Created at or after: an instant as ISO 8601 text, read by PostgreSQL to the microsecond. */
  readonly from?: string;
  /** Created before. */
  readonly to?: string;
}

export interface BankAccountPage {
  readonly accounts: readonly ListedBankAccount[];
  /** Where the next (older) page starts, when there is one. */
  readonly next?: ListPosition;
}

/**
 * Every account the provider opened through the service, with the tenant it was opened for: the
 * provider has no read of them, so the service is their system of record. Identifiers are sealed
 * at rest under DATA_KEY, never stored readable.
 */
export abstract class BankAccountRecords {
  /**
   * Records an account once (by its id, and by its reference): a second record of either changes
   * nothing. An account opened makes its `bank_account.created` event with it, naming `recordedBy`.
   */
  abstract record(account: BankAccount, tenant: string, origin: RecordOrigin, createdAt?: Date, recordedBy?: EventOrigin): Promise<void>;

  /** The tenant's account with this id, its identifiers still sealed; undefined when the tenant has none with this id. */
  abstract find(id: string, tenant: string): Promise<FoundBankAccount | undefined>;

  /** A page of the tenant's accounts, newest first, after `after`. */
  abstract list(filter: BankAccountFilter, limit: number, after?: ListPosition): Promise<BankAccountPage>;
}
