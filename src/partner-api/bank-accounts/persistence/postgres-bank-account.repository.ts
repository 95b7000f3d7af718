import { Injectable, Logger } from '@nestjs/common';
import { isAccountId } from '../../../common/domain/identifiers';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { ListPosition, positionTimeSql } from '../../../common/domain/list-cursor';
import { SharedCommit } from '../../../database/shared-commit';
import type { EventOrigin } from '../../../common/domain/event-origin';
import { eventInsertSql } from '../../../database/partner-event-outbox.sql';
import { Sql } from '../../../database/sql';
import { isRefusedData, unavailableOnOutage } from '../../../database/store-errors';
import type { BankAccount, BankAccountCurrency } from '../domain/bank-account.gateway.port';
import { BankAccountFilter, BankAccountPage, BankAccountRecords, FoundBankAccount, ListedBankAccount, RecordOrigin } from '../domain/bank-account-records.port';

/** What is sealed of an account: its identifiers, and nothing else. */
interface Identifiers {
  readonly iban?: string;
  readonly sortCode?: string;
  readonly accountNumber?: string;
}

/** What one account's identifiers are sealed to: they open as no other account's. */
export const identifiersContext = (id: string): string => `bank_account:${id}`;

/** The last four letters or digits of the account's identifier (the IBAN, or the account number): all a list shows. */
export function lastFourOf(account: Identifiers): string {
  return (account.iban ?? account.accountNumber ?? '').replace(/[^A-Za-z0-9]/g, '').slice(-4);
}

/** A row as the shared statement takes it (one JSON parameter for the batch). */
interface AccountRow {
  readonly id: string;
  readonly tenant: string;
  readonly customer_id: string;
  readonly currency: string;
  readonly status: string;
  readonly reference: string;
  readonly created_ms: number | null;
  readonly identifiers: string;
  readonly identifiers_key: string;
  readonly last4: string;
  readonly origin: RecordOrigin;
  readonly request_id: string | null;
  readonly audit_event_id: string | null;
}

const ROW_COLUMNS = [
  'id',
  'tenant',
  'customer_id',
  'currency',
  'status',
  'reference',
  'created_ms',
  'identifiers',
  'identifiers_key',
  'last4',
  'origin',
  'request_id',
  'audit_event_id',
] as const;
const TABLE_COLUMNS = 'id, tenant, customer_id, currency, status, reference, created_at, identifiers, identifiers_key, last4, origin';

/** The event an account's record makes, by how it came to be recorded (a reconstructed one makes none: it is history). */
const ACCOUNT_EVENT_SOURCE = (recorded: string, input: string) => `
  SELECT r.tenant, r.id AS resource_id, 1 AS sequence, t.request_id, r.reference::text AS reference, t.audit_event_id,
         jsonb_build_object('id', r.id, 'customer_id', r.customer_id, 'currency', r.currency, 'status', r.status) AS data,
         jsonb_build_object('id', r.id, 'customer_id', r.customer_id, 'currency', r.currency, 'status', r.status,
                            'reference', r.reference, 'last4', r.last4, 'created_at', r.created_at) AS snapshot
  FROM ${recorded} r JOIN ${input} t ON t.id = r.id
  WHERE r.origin = 'opened'`;

const INPUT_COLUMNS = `id text, tenant text, customer_id uuid, currency text, status text, reference uuid,
        created_ms bigint, identifiers text, identifiers_key text, last4 text, origin text, request_id text, audit_event_id text`;

/**
 * Accounts recorded at the same moment share a statement, and its commit, with the audit events and
 * DPoP proofs of that moment (SharedCommit): a separate INSERT per account cost an account's opening
 * as much CPU as the rest of it (docs/benchmarks.md, "Opening an account"). A second record of an
 * account (by id or by reference) changes nothing. An account opened makes its
 * `bank_account.created` event in the same statement (the outbox: docs/events.md).
 */
const RECORD_BATCH = (parameter: string) => ({
  with: [
    `accounts_input AS (SELECT * FROM json_to_recordset(${parameter}::json) AS t(${INPUT_COLUMNS}))`,
    `accounts_recorded AS (
      INSERT INTO bank_accounts (${TABLE_COLUMNS})
      SELECT t.id, t.tenant, t.customer_id, t.currency, t.status, t.reference, coalesce(to_timestamp(t.created_ms / 1000.0), now()),
             t.identifiers, t.identifiers_key, t.last4, t.origin
      FROM accounts_input t
      ON CONFLICT DO NOTHING
      RETURNING id, tenant, customer_id, currency, status, reference, created_at, last4, origin)`,
    eventInsertSql('accounts_events', 'bank_account.created', 'bank_account', ACCOUNT_EVENT_SOURCE('accounts_recorded', 'accounts_input')),
  ],
});

const RECORD_ONE = `WITH one_input AS (
    SELECT $1::text AS id, $2::text AS tenant, $3::uuid AS customer_id, $4::text AS currency, $5::text AS status, $6::uuid AS reference,
           $7::bigint AS created_ms, $8::text AS identifiers, $9::text AS identifiers_key, $10::text AS last4, $11::text AS origin,
           $12::text AS request_id, $13::text AS audit_event_id),
  one_recorded AS (
    INSERT INTO bank_accounts (${TABLE_COLUMNS})
    SELECT t.id, t.tenant, t.customer_id, t.currency, t.status, t.reference, coalesce(to_timestamp(t.created_ms / 1000.0), now()),
           t.identifiers, t.identifiers_key, t.last4, t.origin
    FROM one_input t
    ON CONFLICT DO NOTHING
    RETURNING id, tenant, customer_id, currency, status, reference, created_at, last4, origin),
  ${eventInsertSql('one_events', 'bank_account.created', 'bank_account', ACCOUNT_EVENT_SOURCE('one_recorded', 'one_input'))}
  SELECT 1`;

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
  private readonly records: (row: AccountRow) => Promise<void>;

  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
    shared: SharedCommit,
  ) {
    super();
    this.records = shared.writerOf<AccountRow, void>({
      name: 'accounts',
      sql: RECORD_BATCH,
      one: { sql: RECORD_ONE, values: (row) => ROW_COLUMNS.map((column) => row[column]) },
      json: (rows) => JSON.stringify(rows),
      results: (rows) => rows.map(() => undefined),
    });
  }

  async record(account: BankAccount, tenant: string, origin: RecordOrigin, createdAt?: Date, recordedBy: EventOrigin = {}): Promise<void> {
    if (!isAccountId(account.id)) {
      // Not one the service can name in a path: the account stands (the provider opened it), unrecorded, and says so.
      this.logger.error({ reference: account.reference }, 'The provider returned an account id the service cannot record');
      return;
    }
    const identifiers: Identifiers = { iban: account.iban, sortCode: account.sortCode, accountNumber: account.accountNumber };
    const row: AccountRow = {
      id: account.id,
      tenant,
      customer_id: account.customerId,
      currency: account.currency,
      status: account.status.slice(0, 32),
      reference: account.reference,
      created_ms: createdAt ? createdAt.getTime() : null,
      identifiers: await this.box.seal(identifiers, identifiersContext(account.id)),
      identifiers_key: this.box.keyId,
      last4: lastFourOf(identifiers),
      origin,
      request_id: recordedBy.requestId ?? null,
      audit_event_id: recordedBy.auditEventId ?? null,
    };
    try {
      await unavailableOnOutage(() => this.records(row));
    } catch (error) {
      // A row the table refuses (an answer the provider shaped as no account is): the account stands, unrecorded, and says so.
      if (!isRefusedData(error)) throw error;
      this.logger.error({ reference: account.reference, err: error }, 'The provider’s account could not be recorded');
    }
  }

  async find(id: string, tenant: string): Promise<FoundBankAccount | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<Row>(`SELECT ${COLUMNS}, a.identifiers FROM bank_accounts a WHERE a.id = $1 AND a.tenant = $2`, [id, tenant]),
    );
    if (!row) return undefined;
    const account = {
      id: row.id,
      tenant: row.tenant,
      customerId: row.customer_id,
      currency: row.currency,
      status: row.status,
      reference: row.reference,
      createdAt: row.created_at,
    };
    return {
      ...account,
      withIdentifiers: async () => {
        const identifiers = await this.box.open<Identifiers>(row.identifiers, identifiersContext(row.id));
        return {
          ...account,
          ...(identifiers.iban ? { iban: identifiers.iban } : {}),
          ...(identifiers.sortCode ? { sortCode: identifiers.sortCode } : {}),
          ...(identifiers.accountNumber ? { accountNumber: identifiers.accountNumber } : {}),
        };
      },
    };
  }

  async list(filter: BankAccountFilter, limit: number, after?: ListPosition): Promise<BankAccountPage> {
    const values: unknown[] = [];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const where = [`a.tenant = ${bind(filter.tenant)}`];
    if (filter.customerId) where.push(`a.customer_id = ${bind(filter.customerId)}::uuid`);
    // An end user's accounts: those of their customers (at most a thousand), read once (nothing of the row in the
    // subquery: a correlated one would run for every account), each customer's on its own index.
    if (filter.endUser)
      where.push(
        `a.customer_id = ANY (ARRAY(SELECT c.customer_id FROM customer_tenants c WHERE c.tenant = ${bind(filter.tenant)} AND c.end_user = ${bind(filter.endUser)}::uuid ORDER BY c.created_at, c.customer_id LIMIT 1000))`,
      );
    if (filter.currency) where.push(`a.currency = ${bind(filter.currency)}`);
    if (filter.from) where.push(`a.created_at >= ${bind(filter.from)}::timestamptz`);
    if (filter.to) where.push(`a.created_at < ${bind(filter.to)}::timestamptz`);
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
}
