import { Injectable, Logger } from '@nestjs/common';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { ListPosition, positionTimeSql } from '../../../common/domain/list-cursor';
import { Sql } from '../../../database/sql';
import { unavailableOnOutage } from '../../../database/store-errors';
import type { BankAccount, BankAccountCurrency } from '../domain/bank-account.gateway.port';
import { isAccountId } from '../../../common/domain/identifiers';
import {
  BankAccountFilter,
  BankAccountPage,
  BankAccountRecords,
  ListedBankAccount,
  RecordedBankAccount,
  RecordOrigin,
} from '../domain/bank-account-records.port';

/** What is sealed of an account: its identifiers, and nothing else. */
interface Identifiers {
  readonly iban?: string;
  readonly sortCode?: string;
  readonly accountNumber?: string;
}

/** What one account's identifiers are sealed to: they open as no other account's. */
export const identifiersContext = (id: string): string => `bank_account:${id}`;

/** The last four characters of the account's identifier (the IBAN, or the account number): all a list shows. */
export function lastFourOf(account: Identifiers): string {
  return (account.iban ?? account.accountNumber ?? '').replace(/\s/g, '').slice(-4);
}

interface Row {
  id: string;
  tenant: string;
  customer_id: string;
  currency: BankAccountCurrency;
  status: string;
  reference: string;
  created_at: string;
  identifiers: string;
  last4: string;
}

const COLUMNS = `a.id, a.tenant, a.customer_id, a.currency, a.status, a.reference, ${positionTimeSql('a.created_at')} AS created_at`;

@Injectable()
export class PostgresBankAccountRepository extends BankAccountRecords {
  private readonly logger = new Logger('BankAccounts');

  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
  ) {
    super();
  }

  async record(account: BankAccount, tenant: string, origin: RecordOrigin, createdAt?: Date): Promise<void> {
    if (!isAccountId(account.id)) {
      // Not one the service can name in a path: the account stands (the provider opened it), unrecorded, and says so.
      this.logger.error({ reference: account.reference }, 'The provider returned an account id the service cannot record');
      return;
    }
    const identifiers: Identifiers = { iban: account.iban, sortCode: account.sortCode, accountNumber: account.accountNumber };
    const sealed = await this.box.seal(identifiers, identifiersContext(account.id));
    await unavailableOnOutage(() =>
      this.sql.query(
        `INSERT INTO bank_accounts (id, tenant, customer_id, currency, status, reference, created_at, identifiers, identifiers_key, last4, origin)
         VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, now()), $8, $9, $10, $11)
         ON CONFLICT DO NOTHING`,
        [
          account.id,
          tenant,
          account.customerId,
          account.currency,
          account.status.slice(0, 32),
          account.reference,
          createdAt ?? null,
          sealed,
          this.box.keyId,
          lastFourOf(identifiers),
          origin,
        ],
      ),
    );
  }

  async find(id: string): Promise<RecordedBankAccount | undefined> {
    const [row] = await unavailableOnOutage(() => this.sql.query<Row>(`SELECT ${COLUMNS}, a.identifiers FROM bank_accounts a WHERE a.id = $1`, [id]));
    if (!row) return undefined;
    const identifiers = await this.box.open<Identifiers>(row.identifiers, identifiersContext(row.id));
    return {
      id: row.id,
      tenant: row.tenant,
      customerId: row.customer_id,
      currency: row.currency,
      status: row.status,
      reference: row.reference,
      createdAt: row.created_at,
      ...(identifiers.iban ? { iban: identifiers.iban } : {}),
      ...(identifiers.sortCode ? { sortCode: identifiers.sortCode } : {}),
      ...(identifiers.accountNumber ? { accountNumber: identifiers.accountNumber } : {}),
    };
  }

  async list(filter: BankAccountFilter, limit: number, after?: ListPosition): Promise<BankAccountPage> {
    const values: unknown[] = [];
    const bind = (value: unknown) => `$${values.push(value)}`;
    // A customer's accounts are read on its own index; a tenant's on the tenant's. Either way the tenant is checked on each row.
    const where = [`a.tenant = ${bind(filter.tenant)}`];
    if (filter.customerId) where.push(`a.customer_id = ${bind(filter.customerId)}`);
    if (filter.endUser)
      where.push(
        `EXISTS (SELECT 1 FROM customer_tenants c WHERE c.customer_id = a.customer_id AND c.tenant = a.tenant AND c.end_user = ${bind(filter.endUser)})`,
      );
    if (filter.currency) where.push(`a.currency = ${bind(filter.currency)}`);
    if (filter.from) where.push(`a.created_at >= ${bind(filter.from)}`);
    if (filter.to) where.push(`a.created_at < ${bind(filter.to)}`);
    if (after) where.push(`(a.created_at, a.id) < (${bind(after.at)}::timestamptz, ${bind(after.id)})`);
    const rows = await unavailableOnOutage(() =>
      this.sql.query<Row>(
        `SELECT ${COLUMNS}, a.last4 FROM bank_accounts a WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT ${bind(limit + 1)}`,
        values,
      ),
    );
    const accounts = rows.slice(0, limit).map((row): ListedBankAccount => ({
      id: row.id,
      customerId: row.customer_id,
      currency: row.currency,
      status: row.status,
      reference: row.reference,
      createdAt: row.created_at,
      last4: row.last4,
      position: { at: row.created_at, id: row.id },
    }));
    return rows.length > limit ? { accounts, next: accounts[limit - 1].position } : { accounts };
  }

  async accountsOf(customerId: string): Promise<{ id: string; currency: BankAccountCurrency }[]> {
    return unavailableOnOutage(() =>
      this.sql.query<{ id: string; currency: BankAccountCurrency }>(
        'SELECT id, currency FROM bank_accounts WHERE customer_id = $1 ORDER BY created_at, id LIMIT 1000',
        [customerId],
      ),
    );
  }
}
