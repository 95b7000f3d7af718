import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { DataSource } from 'typeorm';
import { GroupCommit } from '../../database/group-commit';
import { Sql } from '../../database/sql';
import { isRefusedData, unavailableOnOutage } from '../../database/store-errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** How often proofs past their window are deleted. */
const SWEEP_EVERY_MS = 60_000;

interface UsedProof {
  readonly key: string;
  readonly expiresAt: Date;
}

/**
 * Records each key once, for a batch: a key new to the table (or whose window has passed) is a
 * first use; a key already there, or twice in the batch, is a replay. One statement, whatever the
 * batch's size; its answers come back in the batch's order. The batch is one JSON parameter (each
 * key with its expiry in ms since the epoch): pg would escape two arrays element by element, and
 * write each Date as text (docs/benchmarks.md).
 */
const RECORD_BATCH = `
  WITH input AS (
    SELECT t.key, to_timestamp(t.expires_ms / 1000.0) AS expires_at, t.n
    FROM ROWS FROM (json_to_recordset($1::json) AS (key text, expires_ms bigint)) WITH ORDINALITY AS t(key, expires_ms, n)
  ), used AS (
    INSERT INTO dpop_proofs (key, expires_at) SELECT key, expires_at FROM input
    ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at < now()
    RETURNING key
  )
  SELECT input.n::int AS n, used.key IS NOT NULL AS first FROM input LEFT JOIN used ON used.key = input.key ORDER BY input.n`;

/**
 * DPoP proofs used, in PostgreSQL: every replica sees every other's. Proofs checked at the same
 * moment by concurrent requests share one statement and one commit (GroupCommit); each request
 * still learns whether its own proof was new.
 */
@Injectable()
export class PgProofReplay extends ProofReplay implements OnApplicationBootstrap, OnApplicationShutdown {
  private sweeper?: PeriodicTask;
  private readonly records = new GroupCommit<UsedProof, boolean>((proofs) => this.record(proofs), {
    maxBatch: 200,
    maxInFlight: 2,
    isRowError: isRefusedData,
  });

  constructor(
    private readonly dataSource: DataSource,
    private readonly sql: Sql,
  ) {
    super();
  }

  useOnce(key: string, expiresAt: Date): Promise<boolean> {
    return this.records.write({ key, expiresAt });
  }

  private async record(proofs: UsedProof[]): Promise<boolean[]> {
    // One row per key: PostgreSQL refuses to touch a row twice in one statement. A key sent twice
    // in one batch is used by the first and replayed by the second.
    const firstIndex = new Map<string, number>();
    proofs.forEach((proof, index) => {
      if (!firstIndex.has(proof.key)) firstIndex.set(proof.key, index);
    });
    // In one order: two statements that lock the same keys (a proof replayed while its first use is
    // being written, on this replica or another) lock them in the same order, so neither waits on
    // the other in a cycle, which PostgreSQL would end by failing one of them.
    const unique = [...firstIndex.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const rows = await unavailableOnOutage(() =>
      // Prepared, on pg itself: one statement per request that presents a proof (see Sql).
      this.sql.prepared<{ n: number; first: boolean }>('dpop-proofs-used', RECORD_BATCH, [
        JSON.stringify(unique.map((key) => ({ key, expires_ms: proofs[firstIndex.get(key)!].expiresAt.getTime() }))),
      ]),
    );
    const firstUse = new Map(rows.map((row) => [unique[row.n - 1], row.first]));
    return proofs.map((proof, index) => firstIndex.get(proof.key) === index && firstUse.get(proof.key) === true);
  }

  onApplicationBootstrap(): void {
    this.sweeper = startPeriodicTask('DpopProofSweep', SWEEP_EVERY_MS, SWEEP_EVERY_MS, () =>
      this.dataSource.query('DELETE FROM dpop_proofs WHERE expires_at < now()'),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweeper?.stop();
  }
}
