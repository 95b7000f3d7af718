import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { unavailableOnOutage } from '../../database/store-errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** How often proofs past their window are deleted. */
const SWEEP_EVERY_MS = 60_000;

/**
 * DPoP proofs used, in PostgreSQL: every replica sees every other's. One statement per proof; a
 * key seen before is a replay unless its window has passed (then the row is the proof's again).
 */
@Injectable()
export class PgProofReplay extends ProofReplay implements OnModuleInit, OnModuleDestroy {
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async useOnce(key: string, expiresAt: Date): Promise<boolean> {
    const [{ used }]: { used: number }[] = await unavailableOnOutage(() =>
      this.dataSource.query(
        `WITH used AS (
           INSERT INTO dpop_proofs (key, expires_at) VALUES ($1, $2)
           ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at < now()
           RETURNING 1
         ) SELECT count(*)::int AS used FROM used`,
        [key, expiresAt],
      ),
    );
    return used === 1;
  }

  onModuleInit(): void {
    this.sweeper = setInterval(() => {
      this.dataSource.query('DELETE FROM dpop_proofs WHERE expires_at < now()').catch(() => undefined);
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
