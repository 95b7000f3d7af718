import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Metrics } from '../../common/domain/metrics.port';
import { BackgroundWork } from '../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { MAX_UNRESOLVED_PAGE, UnresolvedCalls } from './domain/unresolved-calls.service';

/** How often the calls waiting for reconciliation are counted, for the metric and its alert. */
export const UNRESOLVED_COUNT_PERIOD_MS = 30_000;

/**
 * Counts the calls whose outcome is unknown (the listing's default window: attempted more than a
 * minute and less than 30 days ago), up to one page, for `audit_unresolved_calls`: a number above
 * zero pages someone to reconcile them (docs/operations.md, "Alerts").
 */
@Injectable()
export class UnresolvedCallsCount implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: PeriodicTask;

  constructor(
    private readonly calls: UnresolvedCalls,
    private readonly metrics: Metrics,
    private readonly background: BackgroundWork,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.background.runs) return;
    this.task = startPeriodicTask('Unresolved calls count', 5_000, UNRESOLVED_COUNT_PERIOD_MS, () => this.count());
  }

  /** One count, reported to the metric. */
  async count(): Promise<void> {
    const page = await this.calls.page({}, MAX_UNRESOLVED_PAGE);
    this.metrics.unresolvedCalls(page.calls.length);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}
