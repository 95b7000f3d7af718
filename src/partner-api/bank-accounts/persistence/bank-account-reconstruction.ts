import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { isAccountId, isUuid } from '../../../common/domain/identifiers';
import { BackgroundWork } from '../../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../../common/runtime/periodic-task';
import { Sql } from '../../../database/sql';
import { IdempotencyService } from '../../../idempotency/domain/idempotency.service';
import { BANK_ACCOUNT_CURRENCIES, type BankAccount } from '../domain/bank-account.gateway.port';
import { BankAccountRecords } from '../domain/bank-account-records.port';
import { BANK_ACCOUNT_OPERATIONS } from '../domain/bank-accounts.service';
import { identifiersContext } from './postgres-bank-account.repository';

/** The name its report is kept under in data_upgrades. */
export const RECONSTRUCTION = 'bank_accounts.reconstruct';

/** While replicas of the release before may still open accounts they do not record, how often their kept answers are read again (and identifiers under a previous key sealed again). */
const AGAIN_EVERY_MS = 10 * 60_000;
/** After a start that found the reconstruction done: its first pass, in the background. */
const AGAIN_FIRST_MS = 5_000;

type NotReconstructed = { reference: string; customer_id: string | null; opened_at: string; why: string };

/** What the reconstruction did, kept in data_upgrades (never an identifier: references and ids only). */
export interface ReconstructionReport {
  /** Accounts rebuilt from the answers the idempotency store still kept. */
  readonly reconstructed: number;
  /** Accounts the service knows were opened, and could not rebuild: each by reference, and why. */
  readonly notReconstructed: readonly NotReconstructed[];
}

/** Whether a kept answer is an account the table can hold (an answer from before, of any shape, is not trusted). */
function isAccount(value: unknown): value is BankAccount {
  const account = value as Partial<BankAccount> | null;
  return (
    typeof account === 'object' &&
    account !== null &&
    isAccountId(account.id) &&
    isUuid(account.customerId) &&
    isUuid(account.reference) &&
    typeof account.status === 'string' &&
    (BANK_ACCOUNT_CURRENCIES as readonly unknown[]).includes(account.currency)
  );
}

/**
 * Accounts opened before the service recorded them (migration PartnerResources1765353600000),
 * rebuilt by the service, which holds DATA_KEY: from the answers the idempotency store keeps (for
 * IDEMPOTENCY_TTL_HOURS), which hold the whole account; the audit log's terminal events name the
 * reference, customer and currency of every account opened, not its id or identifiers, so those it
 * names that no kept answer holds are reported. The report is written once, by the first start. For
 * IDEMPOTENCY_TTL_HOURS after it, the kept answers of accounts not recorded yet are read again, in
 * the background, soon after each start and every 10 minutes: replicas of the release before,
 * during a rolling update, open accounts without recording them. Bad data is reported (and logged),
 * never a reason not to start. An account is recorded in the tenant of the client that opened it,
 * and only when its customer is that tenant's.
 *
 * Also, every 10 minutes while DATA_PREVIOUS_KEYS names keys, identifiers sealed under one of them
 * are sealed again under DATA_KEY (replicas still on the old configuration seal under the old key
 * until they are rolled), and the log says how many are left.
 */
@Injectable()
export class BankAccountReconstruction implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('BankAccounts');
  private again?: PeriodicTask;

  constructor(
    private readonly sql: Sql,
    private readonly records: BankAccountRecords,
    private readonly box: DataBox,
    private readonly idempotency: IdempotencyService,
    private readonly background: BackgroundWork,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.background.runs) return;
    const [done] = await this.sql.query<{ age_ms: number }>(
      `SELECT (extract(epoch FROM now() - completed_at) * 1000)::float8 AS age_ms FROM data_upgrades WHERE name = $1`,
      [RECONSTRUCTION],
    );
    if (!done) {
      const report = await this.reconstruct();
      const [written] = await this.sql.query('INSERT INTO data_upgrades (name, report) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING name', [
        RECONSTRUCTION,
        JSON.stringify(report),
      ]);
      if (written && (report.reconstructed > 0 || report.notReconstructed.length > 0)) {
        const log = report.notReconstructed.length > 0 ? 'warn' : 'log';
        this.logger[log](
          { reconstructed: report.reconstructed, not_reconstructed: report.notReconstructed.map((account) => account.reference) },
          'Bank accounts opened before they were recorded: reconstructed what the service held (the report: data_upgrades, docs/partner-resources.md)',
        );
      }
    }
    // In the background, after the start: the kept answers again while the release before may still be serving, and identifiers under a previous key.
    await this.again?.stop();
    const until = Date.now() + this.idempotency.keptForMs - (done?.age_ms ?? 0);
    this.again = startPeriodicTask('BankAccountRecords', done ? AGAIN_FIRST_MS : AGAIN_EVERY_MS, AGAIN_EVERY_MS, async () => {
      if (Date.now() < until) await this.fromKeptAnswers();
      await this.resealIdentifiers();
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.again?.stop();
  }

  /** Rebuilds what it can; returns what it did, and what it could not. */
  async reconstruct(): Promise<ReconstructionReport> {
    const { reconstructed, failed } = await this.fromKeptAnswers();
    // Every account opened (its terminal event), once, that is still not recorded.
    const missing = await this.sql.query<{ reference: string; customer_id: string | null; opened_at: Date }>(
      `SELECT DISTINCT ON (e.reference) e.reference, e.customer_id, e.occurred_at AS opened_at
       FROM audit_events e
       WHERE e.phase = 'succeeded' AND e.operation = $1 AND e.reference IS NOT NULL AND e.replayed = false
         AND NOT EXISTS (SELECT 1 FROM bank_accounts a WHERE a.reference = e.reference)
       ORDER BY e.reference, e.occurred_at`,
      [BANK_ACCOUNT_OPERATIONS.open],
    );
    const explained = new Set(failed.map((row) => row.reference));
    return {
      reconstructed,
      notReconstructed: [
        ...failed,
        ...missing
          .filter((row) => !explained.has(row.reference))
          .map((row) => ({
            reference: row.reference,
            customer_id: row.customer_id,
            opened_at: row.opened_at.toISOString(),
            why: 'its answer is no longer kept (IDEMPOTENCY_TTL_HOURS): the audit log names the account, not its id or identifiers',
          })),
      ],
    };
  }

  /** The accounts the kept answers hold, recorded where they are not yet; how many were recorded now, and what could not be. */
  private async fromKeptAnswers(): Promise<{ reconstructed: number; failed: NotReconstructed[] }> {
    let reconstructed = 0;
    const failed: NotReconstructed[] = [];
    const fail = (reference: string, openedAt: Date, why: string) => failed.push({ reference, customer_id: null, opened_at: openedAt.toISOString(), why });
    // Only the answers of accounts not recorded yet are opened.
    const recorded = async (references: string[]) =>
      new Set(
        (await this.sql.query<{ reference: string }>('SELECT reference::text FROM bank_accounts WHERE reference = ANY($1::uuid[])', [references])).map(
          (row) => row.reference,
        ),
      );
    for (const write of await this.idempotency.keptWrites(BANK_ACCOUNT_OPERATIONS.open, recorded)) {
      const kept = await this.idempotency.keptResult(write.reference);
      if (!kept) continue; // expired meanwhile
      if ('unreadable' in kept) {
        fail(write.reference, write.createdAt, 'its kept answer does not open with DATA_KEY or DATA_PREVIOUS_KEYS');
        continue;
      }
      if (!isAccount(kept.result)) {
        fail(write.reference, write.createdAt, 'its kept answer is not an account the service can record');
        continue;
      }
      try {
        // The tenant of whoever opened it, held to the customer's: never the tenant a provider's answer would name.
        const tenant = await this.tenantOf(write.clientId, kept.result.customerId);
        if (!tenant) {
          fail(write.reference, write.createdAt, 'its customer is not the tenant’s of the client that opened it');
          continue;
        }
        await this.records.record(kept.result, tenant, 'reconstructed', write.createdAt);
        reconstructed += 1;
      } catch (error) {
        this.logger.error({ reference: write.reference, err: error }, 'A bank account could not be reconstructed');
        fail(write.reference, write.createdAt, 'recording it failed (the log says why)');
      }
    }
    if (reconstructed > 0) this.logger.log({ reconstructed }, 'Bank accounts recorded from the answers the idempotency store kept');
    if (failed.length > 0)
      this.logger.warn({ not_reconstructed: failed.map((row) => row.reference) }, 'Bank accounts the kept answers hold that could not be recorded');
    return { reconstructed, failed };
  }

  /** Identifiers sealed under a key of DATA_PREVIOUS_KEYS, sealed again under DATA_KEY, a batch at a time; returns how many. */
  async resealIdentifiers(): Promise<number> {
    const previous = this.box.previousKeyIds;
    if (previous.length === 0) return 0;
    let resealed = 0;
    let after = '';
    for (;;) {
      const stale = await this.sql.query<{ id: string; identifiers: string }>(
        'SELECT id, identifiers FROM bank_accounts WHERE identifiers_key = ANY($1::varchar[]) AND id > $2 ORDER BY id LIMIT 500',
        [previous, after],
      );
      if (stale.length === 0) break;
      for (const row of stale) {
        after = row.id;
        try {
          const identifiers = await this.box.open<object>(row.identifiers, identifiersContext(row.id));
          const sealed = await this.box.seal(identifiers, identifiersContext(row.id));
          // Unless another replica sealed it again meanwhile.
          const changed = await this.sql.query(
            'UPDATE bank_accounts SET identifiers = $2, identifiers_key = $3 WHERE id = $1 AND identifiers = $4 RETURNING id',
            [row.id, sealed, this.box.keyId, row.identifiers],
          );
          resealed += changed.length;
        } catch (error) {
          this.logger.error({ bank_account_id: row.id, err: error }, 'A bank account’s identifiers could not be sealed again under DATA_KEY');
        }
      }
    }
    // What the operator waits for before removing a previous key (docs/operations.md): none left under one.
    const [{ left }] = await this.sql.query<{ left: number }>('SELECT count(*)::int AS left FROM bank_accounts WHERE identifiers_key = ANY($1::varchar[])', [
      previous,
    ]);
    this.logger.log({ resealed, left_under_previous_keys: left }, 'Bank accounts’ identifiers sealed again under DATA_KEY');
    return resealed;
  }

  /**
   * The tenant of the client that opened the account (an API client's, or, for an end user's
   * pseudonym, the tenant whose customer is theirs), when the customer is that tenant's; undefined otherwise.
   */
  private async tenantOf(clientId: string, customerId: string): Promise<string | undefined> {
    const [row] = await this.sql.query<{ tenant: string }>(
      `SELECT c.tenant FROM customer_tenants c
       WHERE c.customer_id = $2::uuid AND (c.end_user = $1::uuid OR c.tenant = (SELECT k.tenant FROM api_clients k WHERE k.id = $1::uuid))`,
      [clientId, customerId],
    );
    return row?.tenant;
  }
}
