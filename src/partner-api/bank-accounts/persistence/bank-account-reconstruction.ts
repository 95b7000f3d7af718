import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { Sql } from '../../../database/sql';
import { isUuid } from '../../../common/domain/identifiers';
import { IdempotencyService } from '../../../idempotency/domain/idempotency.service';
import type { BankAccount } from '../domain/bank-account.gateway.port';
import { BankAccountRecords } from '../domain/bank-account-records.port';
import { BANK_ACCOUNT_OPERATIONS } from '../domain/bank-accounts.service';
import { identifiersContext } from './postgres-bank-account.repository';

/** The name its report is kept under in data_upgrades. */
export const RECONSTRUCTION = 'bank_accounts.reconstruct';

/** What the reconstruction did, kept in data_upgrades (never an identifier: references and ids only). */
export interface ReconstructionReport {
  /** Accounts rebuilt from the answers the idempotency store still kept. */
  readonly reconstructed: number;
  /** Accounts the audit log says were opened, of which nothing the service holds says the id or the identifiers. */
  readonly notReconstructed: readonly { reference: string; customer_id: string | null; opened_at: string; why: string }[];
}

/**
 * Accounts opened before the service recorded them (migration PartnerResources1765353600000),
 * rebuilt once, at the first start after it, from what the service holds: the answers the
 * idempotency store keeps (for IDEMPOTENCY_TTL_HOURS), which hold the whole account, and the audit
 * log's terminal events, which name the reference, customer and currency of every account opened
 * but not its id or identifiers. Those the audit log names and no kept answer holds are reported.
 * Also, at every start, what is sealed under a previous DATA_KEY is sealed again under the current one.
 */
@Injectable()
export class BankAccountReconstruction implements OnApplicationBootstrap {
  private readonly logger = new Logger('BankAccounts');

  constructor(
    private readonly sql: Sql,
    private readonly records: BankAccountRecords,
    private readonly box: DataBox,
    private readonly idempotency: IdempotencyService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const [done] = await this.sql.query('SELECT 1 FROM data_upgrades WHERE name = $1', [RECONSTRUCTION]);
    if (!done) {
      const report = await this.reconstruct();
      const [written] = await this.sql.query('INSERT INTO data_upgrades (name, report) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING name', [
        RECONSTRUCTION,
        JSON.stringify(report),
      ]);
      if (written) {
        const log = report.notReconstructed.length > 0 ? 'warn' : 'log';
        this.logger[log](
          { reconstructed: report.reconstructed, not_reconstructed: report.notReconstructed.map((account) => account.reference) },
          'Bank accounts opened before they were recorded: reconstructed what the service held (the report: data_upgrades, docs/operations.md)',
        );
      }
    }
    const resealed = await this.resealIdentifiers();
    if (resealed > 0) this.logger.log({ resealed }, 'Bank accounts’ identifiers sealed again under the current DATA_KEY');
  }

  /** Rebuilds what it can; returns what it did, and what it could not. */
  async reconstruct(): Promise<ReconstructionReport> {
    let reconstructed = 0;
    const unreadable: ReconstructionReport['notReconstructed'][number][] = [];
    for (const kept of await this.idempotency.keptResults(BANK_ACCOUNT_OPERATIONS.open)) {
      if ('unreadable' in kept) {
        unreadable.push({
          reference: kept.reference,
          customer_id: null,
          opened_at: kept.createdAt.toISOString(),
          why: 'its kept answer does not open with DATA_KEY or DATA_PREVIOUS_KEYS',
        });
        continue;
      }
      const account = kept.result as BankAccount;
      const tenant = isUuid(account.customerId) ? await this.tenantOf(account.customerId) : undefined;
      if (!tenant) continue; // a customer no tenant holds: nobody could read the account
      await this.records.record(account, tenant, 'reconstructed', kept.createdAt);
      reconstructed += 1;
    }
    // Every account opened (its terminal event), once, that is still not recorded.
    const missing = await this.sql.query<{ reference: string; customer_id: string | null; opened_at: Date }>(
      `SELECT DISTINCT ON (e.reference) e.reference, e.customer_id, e.occurred_at AS opened_at
       FROM audit_events e
       WHERE e.phase = 'succeeded' AND e.operation = $1 AND e.reference IS NOT NULL AND e.replayed = false
         AND NOT EXISTS (SELECT 1 FROM bank_accounts a WHERE a.reference = e.reference)
       ORDER BY e.reference, e.occurred_at`,
      [BANK_ACCOUNT_OPERATIONS.open],
    );
    const unreadableReferences = new Set(unreadable.map((row) => row.reference));
    return {
      reconstructed,
      notReconstructed: [
        ...unreadable,
        ...missing
          .filter((row) => !unreadableReferences.has(row.reference))
          .map((row) => ({
            reference: row.reference,
            customer_id: row.customer_id,
            opened_at: row.opened_at.toISOString(),
            why: 'its answer is no longer kept (IDEMPOTENCY_TTL_HOURS): the audit log names the account, not its id or identifiers',
          })),
      ],
    };
  }

  /** Identifiers sealed under a key other than the current one, sealed again under it, a batch at a time; returns how many. */
  async resealIdentifiers(): Promise<number> {
    let resealed = 0;
    let after = '';
    for (;;) {
      const stale = await this.sql.query<{ id: string; identifiers: string }>(
        'SELECT id, identifiers FROM bank_accounts WHERE identifiers_key <> $1 AND id > $2 ORDER BY id LIMIT 500',
        [this.box.keyId, after],
      );
      if (stale.length === 0) return resealed;
      for (const row of stale) {
        after = row.id;
        try {
          const identifiers = await this.box.open<object>(row.identifiers, identifiersContext(row.id));
          const sealed = await this.box.seal(identifiers, identifiersContext(row.id));
          await this.sql.query('UPDATE bank_accounts SET identifiers = $2, identifiers_key = $3 WHERE id = $1 AND identifiers = $4', [
            row.id,
            sealed,
            this.box.keyId,
            row.identifiers,
          ]);
          resealed += 1;
        } catch {
          this.logger.error(
            { bank_account_id: row.id },
            'A bank account’s identifiers do not open with DATA_KEY or DATA_PREVIOUS_KEYS: the key they were sealed under is missing',
          );
        }
      }
    }
  }

  private async tenantOf(customerId: string): Promise<string | undefined> {
    const [row] = await this.sql.query<{ tenant: string }>('SELECT tenant FROM customer_tenants WHERE customer_id = $1', [customerId]);
    return row?.tenant;
  }
}
