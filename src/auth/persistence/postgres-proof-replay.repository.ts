import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BackgroundWork } from '../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { DataSource } from 'typeorm';
import { SharedCommit } from '../../database/shared-commit';
import { unavailableOnOutage } from '../../database/store-errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** How often proofs past their window are deleted. */
const SWEEP_EVERY_MS = 60_000;
/** At most this many are deleted by one statement, so that a sweep holds no row's lock for long. */
const SWEEP_CHUNK = 5_000;

/**
 * Proofs past their window, deleted in key order, skipping any a statement is writing (a key used
 * again once its window passed): the sweep never waits on another's lock, so it is never in a cycle
 * of waits with the statements that record proofs, which lock their keys in key order too.
 */
const SWEEP = `
  WITH gone AS (
    DELETE FROM dpop_proofs WHERE key IN (
      SELECT key FROM dpop_proofs WHERE expires_at < now() ORDER BY key LIMIT ${SWEEP_CHUNK} FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM gone`;

interface UsedProof {
  readonly key: string;
  readonly expiresAt: Date;
}

/**
 * Records each key once, for a batch: a key new to the table (or whose window has passed) is a
 * first use; a key already there, or twice in the batch, is a replay. Its queries, for any batch's
 * size, sit in the statement the audit events of the same moment go in (SharedCommit). The batch is
 * one JSON parameter (each key with its expiry in ms since the epoch): pg would escape two arrays
 * element by element, and write each Date as text (docs/benchmarks.md). Answers `true` by `n` for
 * each key used for the first time.
 */
const RECORD_BATCH = (parameter: string) => ({
  with: [
    `proofs_input AS (
      SELECT t.key, to_timestamp(t.expires_ms / 1000.0) AS expires_at, t.n
      FROM ROWS FROM (json_to_recordset(${parameter}::json) AS (key text, expires_ms bigint)) WITH ORDINALITY AS t(key, expires_ms, n))`,
    `proofs_used AS (
      INSERT INTO dpop_proofs (key, expires_at) SELECT key, expires_at FROM proofs_input
      ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at < now()
      RETURNING key)`,
  ],
  answer: 'SELECT proofs_input.n, proofs_used.key IS NOT NULL AS answer FROM proofs_input LEFT JOIN proofs_used ON proofs_used.key = proofs_input.key',
});

/**
 * DPoP proofs used, in PostgreSQL: every replica sees every other's. Proofs checked at the same
 * moment by concurrent requests share one statement and one commit, with the audit events written
 * then (SharedCommit); each request still learns whether its own proof was new.
 */
@Injectable()
export class PostgresProofReplayRepository extends ProofReplay implements OnApplicationBootstrap, OnApplicationShutdown {
  private sweeper?: PeriodicTask;
  private readonly records: (proof: UsedProof) => Promise<boolean>;

  constructor(
    private readonly dataSource: DataSource,
    shared: SharedCommit,
    private readonly background: BackgroundWork,
  ) {
    super();
    this.records = shared.writerOf<UsedProof, boolean>({
      name: 'proofs',
      sql: RECORD_BATCH,
      // One row per key: PostgreSQL refuses to touch a row twice in one statement. A key sent twice
      // in one batch is used by the first and replayed by the second.
      json: (proofs) => {
        const first = firstOfEach(proofs);
        return JSON.stringify(inKeyOrder(first).map((key) => ({ key, expires_ms: proofs[first.get(key)!].expiresAt.getTime() })));
      },
      results: (proofs, answers) => {
        const first = firstOfEach(proofs);
        const firstUse = new Set(inKeyOrder(first).filter((_key, index) => answers.get(index + 1) === 'true'));
        return proofs.map((proof, index) => first.get(proof.key) === index && firstUse.has(proof.key));
      },
    });
  }

  useOnce(key: string, expiresAt: Date): Promise<boolean> {
    return unavailableOnOutage(() => this.records({ key, expiresAt }));
  }

  /** Deletes the proofs past their window but those being written; resolves to how many it deleted. */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const [chunk] = await this.dataSource.query<{ deleted: number }[]>(SWEEP);
      deleted += chunk.deleted;
      if (chunk.deleted < SWEEP_CHUNK) return deleted;
    }
  }

  onApplicationBootstrap(): void {
    if (!this.background.runs) return;
    this.sweeper = startPeriodicTask('DpopProofSweep', SWEEP_EVERY_MS, SWEEP_EVERY_MS, () => this.sweep());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweeper?.stop();
  }
}

/** Each key's first position in the batch. */
function firstOfEach(proofs: readonly UsedProof[]): Map<string, number> {
  const first = new Map<string, number>();
  proofs.forEach((proof, index) => {
    if (!first.has(proof.key)) first.set(proof.key, index);
  });
  return first;
}

/**
 * The batch's keys in one order: two statements that lock the same keys (a proof replayed while its
 * first use is being written, on this replica or another) lock them in the same order, so neither
 * waits on the other in a cycle, which PostgreSQL would end by failing one, audit events and all.
 */
function inKeyOrder(first: ReadonlyMap<string, number>): string[] {
  return [...first.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
