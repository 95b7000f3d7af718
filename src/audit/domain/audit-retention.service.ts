import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/domain/clock.port';
import { AuditLog } from './audit-log.port';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 10_000;

/** Deletes audit events past their retention, in batches so no transaction grows large. */
@Injectable()
export class AuditRetention {
  private readonly logger = new Logger('AuditRetention');

  constructor(
    private readonly log: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** Returns how many events were deleted. The store refuses a retention under 365 days. */
  async purge(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * DAY_MS);
    let total = 0;
    let purged = BATCH;
    while (purged === BATCH) {
      purged = await this.log.purgeBatch(cutoff, BATCH);
      total += purged;
    }
    this.logger.log({ cutoff: cutoff.toISOString(), purged: total }, 'Audit retention purge done');
    return total;
  }
}
