import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/load-config';
import { AuditChainRewound, AuditSealer } from './domain/audit-sealer.service';

/** Every second: an event is sealed within about a second of the moment no earlier transaction can still commit. */
export const SEAL_INTERVAL_MS = 1000;

/**
 * Runs the sealer in every replica (the seal lock lets one at a time extend the chain), and once
 * more at shutdown so that the last events are covered before the process goes. A failure is
 * logged once, and its end once, rather than every second.
 */
@Injectable()
export class AuditSealSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditSealer');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private failing = false;

  constructor(
    private readonly sealer: AuditSealer,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.getOrThrow('AUDIT_SEALING', { infer: true })) {
      this.logger.warn('AUDIT_SEALING is off: new audit events are not sealed, and npm run audit:verify cannot vouch for them');
      return;
    }
    this.timer = setInterval(() => this.tick(), SEAL_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.seal();
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.seal().finally(() => {
      this.running = undefined;
    });
  }

  private async seal(): Promise<void> {
    try {
      await this.sealer.sealPending();
      if (this.failing) this.logger.log('Audit sealing works again');
      this.failing = false;
    } catch (error) {
      if (error instanceof AuditChainRewound) {
        // The sealer said why, once; it will not go on.
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      if (!this.failing) this.logger.warn({ err: error }, 'Audit sealing failed; it is tried again every second');
      this.failing = true;
    }
  }
}
