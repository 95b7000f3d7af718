import { BackgroundWork } from '../../common/domain/background-work';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuditSealMonitor, SealerState, SealerStatus } from '../../common/domain/audit-seal-status';
import { Clock } from '../../common/domain/clock.port';
import { Metrics } from '../../common/domain/metrics.port';
import { AuditSettings } from '../audit.settings';
import { AuditChainRewound, AuditSealer } from './domain/audit-sealer.service';

/** Every second: an event is sealed within about a second of the moment no earlier transaction can still commit. */
export const SEAL_INTERVAL_MS = 1000;

/**
 * Runs the sealer in every replica (the seal lock lets one at a time extend the chain), and once
 * more at shutdown so that the last events are covered before the process goes. A failure is
 * logged once, and its end once, rather than every second.
 *
 * Each round also reads how far the chain reaches and how long the next event has waited, even
 * when sealing has stopped: readiness and /metrics report it (AuditSealMonitor), so that a sealer
 * that stopped, fails or lags is seen, not only logged.
 */
@Injectable()
export class AuditSealSchedule extends AuditSealMonitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditSealer');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private state: SealerState = 'running';
  private reason?: string;
  private progress: { newest: { seq: number; sealedAt: Date } | null; nextUnsealedAt: Date | null } = { newest: null, nextUnsealedAt: null };
  private checkedAt: Date | null = null;
  private readonly maxLagSeconds: number;

  constructor(
    private readonly sealer: AuditSealer,
    private readonly settings: AuditSettings,
    private readonly metrics: Metrics,
    /** An API replica (PROCESS_ROLE=api) seals nothing: it reads how far the worker's sealing reaches, for its readiness and metrics. */
    private readonly background: BackgroundWork,
    private readonly clock: Clock,
  ) {
    super();
    this.maxLagSeconds = settings.sealMaxLagSeconds;
  }

  status(): SealerStatus {
    return {
      state: this.state,
      ...(this.reason ? { reason: this.reason } : {}),
      newestCheckpoint: this.progress.newest,
      oldestUnsealedAt: this.progress.nextUnsealedAt,
      maxLagSeconds: this.maxLagSeconds,
      checkedAt: this.checkedAt,
    };
  }

  onApplicationBootstrap(): void {
    if (!this.settings.sealing) {
      this.logger.warn('AUDIT_SEALING is off: new audit events are not sealed, and npm run audit:verify cannot vouch for them');
      this.state = 'off';
      this.metrics.auditSealer(this.status());
      return;
    }
    this.metrics.auditSealer(this.status());
    this.timer = setInterval(() => this.tick(), SEAL_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    if (this.state !== 'stopped' && this.background.runs) await this.seal();
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.round().finally(() => {
      this.running = undefined;
    });
  }

  private async round(): Promise<void> {
    if (this.state !== 'stopped' && this.background.runs) await this.seal();
    try {
      this.progress = await this.sealer.progress();
      this.checkedAt = this.clock.now();
    } catch {
      // The database did not answer: the sealing round says so (failing); the last reading stays.
    }
    this.metrics.auditSealer(this.status());
  }

  private async seal(): Promise<void> {
    try {
      await this.sealer.sealPending();
      if (this.state === 'failing') this.logger.log('Audit sealing works again');
      this.state = 'running';
      this.reason = undefined;
    } catch (error) {
      if (error instanceof AuditChainRewound) {
        // The sealer said why, once; it will not go on. The rounds go on reading how far the chain reaches.
        this.state = 'stopped';
        this.reason = error.message;
        return;
      }
      if (this.state !== 'failing') this.logger.warn({ err: error }, 'Audit sealing failed; it is tried again every second');
      this.state = 'failing';
      this.reason = 'the last sealing round failed: the database refused or did not answer (see the log)';
    }
  }
}
