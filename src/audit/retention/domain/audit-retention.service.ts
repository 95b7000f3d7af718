import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import { AuditSealer } from '../../seal/domain/audit-sealer.service';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Events per purge transaction, about: whole checkpoints go, each recorded by a signed purge checkpoint. */
const BATCH = 50_000;

/**
 * Deletes audit events past their retention: the oldest checkpoints' ranges, whole, so that what
 * is left still verifies, a batch per transaction so that none grows large.
 */
@Injectable()
export class AuditRetention {
  private readonly logger = new Logger('AuditRetention');

  constructor(
    private readonly sealer: AuditSealer,
    private readonly clock: Clock,
  ) {}

  /** Returns how many events were deleted. The store refuses a retention under 365 days. */
  async purge(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * DAY_MS);
    let total = 0;
    for (let purged = -1; purged !== 0;) {
      purged = await this.sealer.purgeOnce(cutoff, BATCH);
      total += purged;
    }
    this.logger.log({ cutoff: cutoff.toISOString(), purged: total }, 'Audit retention purge done');
    return total;
  }
}
