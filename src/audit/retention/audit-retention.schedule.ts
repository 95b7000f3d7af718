import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BackgroundWork } from '../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { AuditSettings } from '../audit.settings';
import { AuditRetention } from './domain/audit-retention.service';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The retention purge a minute after start-up and then daily, in every replica (it is idempotent). */
@Injectable()
export class AuditRetentionSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: PeriodicTask;

  constructor(
    private readonly retention: AuditRetention,
    private readonly settings: AuditSettings,
    private readonly background: BackgroundWork,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.purgeDaily || !this.background.runs) return;
    const days = this.settings.retentionDays;
    this.task = startPeriodicTask('AuditRetention', 60_000, DAY_MS, () => this.retention.purge(days));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}
