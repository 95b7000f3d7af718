import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/load-config';
import { AuditRetention } from './domain/audit-retention.service';

const FIRST_RUN_DELAY_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Runs the retention purge a minute after start-up and then daily, in every replica (the purge is
 * idempotent). Plain timers: one fixed period needs no scheduler library.
 */
@Injectable()
export class AuditRetentionSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditRetention');
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly retention: AuditRetention,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.getOrThrow('AUDIT_PURGE_DAILY', { infer: true })) return;
    this.timer = setTimeout(() => {
      this.run();
      this.timer = setInterval(() => this.run(), DAY_MS).unref();
    }, FIRST_RUN_DELAY_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running;
  }

  private run(): void {
    const days = this.config.getOrThrow('AUDIT_RETENTION_DAYS', { infer: true });
    this.running = this.retention.purge(days).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Audit retention purge failed; it runs again tomorrow');
    });
  }
}
