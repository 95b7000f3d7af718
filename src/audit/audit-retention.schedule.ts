import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PeriodicTask, startPeriodicTask } from '../common/runtime/periodic-task';
import { AppConfig } from '../config/load-config';
import { AuditRetention } from './domain/audit-retention.service';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The retention purge a minute after start-up and then daily, in every replica (it is idempotent). */
@Injectable()
export class AuditRetentionSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: PeriodicTask;

  constructor(
    private readonly retention: AuditRetention,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.getOrThrow('AUDIT_PURGE_DAILY', { infer: true })) return;
    const days = this.config.getOrThrow('AUDIT_RETENTION_DAYS', { infer: true });
    this.task = startPeriodicTask('AuditRetention', 60_000, DAY_MS, () => this.retention.purge(days));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}
