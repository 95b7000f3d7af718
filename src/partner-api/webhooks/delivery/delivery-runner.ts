import { EventEmitter } from 'node:events';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { makeWorkerUtils, run, type Runner, type Task, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import { BackgroundWork } from '../../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../../common/runtime/periodic-task';
import { Sql } from '../../../database/sql';
import { quietJobEngineLogger } from '../../../database/typeorm-options';
import { WebhookDelivery } from './webhook-delivery.service';

/** Where the job engine connects, and how many deliveries one process attempts at once. */
export abstract class DeliveryRunnerOptions {
  abstract readonly databaseUrl: string;
  abstract readonly concurrency: number;
  /** Off: this process runs no delivery (another does). */
  abstract readonly enabled: boolean;
  /** A worker silent this long is taken for dead, and its jobs unlocked. */
  abstract readonly lostAfterMs: number;
}

const payloadId = (payload: unknown, key: string): string => {
  const id = (payload as Record<string, unknown> | null)?.[key];
  if (typeof id !== 'string') throw new Error(`A job without its ${key}`);
  return id;
};

/**
 * Runs the webhooks' jobs on graphile-worker (docs/decisions.md, "Events and webhooks"): the jobs
 * the outbox's trigger and the deliveries ask for, each taken by one process under the engine's
 * lock. A job whose handler throws is retried by the engine; an attempt that reached the endpoint
 * is never thrown, it is recorded and its next attempt asked for on the Standard Webhooks schedule.
 *
 * A process killed mid-attempt keeps its jobs locked in the engine (for 4 hours, graphile-worker's
 * own limit). So each process beats a heartbeat per worker pool and worker (job_workers), and every
 * process looks for those silent past WEBHOOK_WORKER_LOST_AFTER_MS: the one that removes their rows hands their
 * jobs back with the engine's documented forceUnlockWorkers, and another process runs them again,
 * with the same `webhook-id`.
 */
@Injectable()
export class DeliveryRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private runner?: Runner;
  private utils?: WorkerUtils;
  private heartbeat?: PeriodicTask;
  private readonly workers = new Set<string>();

  constructor(
    private readonly delivery: WebhookDelivery,
    private readonly options: DeliveryRunnerOptions,
    private readonly background: BackgroundWork,
    private readonly sql: Sql,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.enabled || !this.background.runs) return;
    const fanOut: Task = async (payload) => {
      await this.delivery.fanOut(payloadId(payload, 'event_id'));
    };
    const deliver: Task = async (payload) => {
      const generation = (payload as { generation?: unknown }).generation;
      await this.delivery.deliver(payloadId(payload, 'delivery_id'), typeof generation === 'number' ? generation : undefined);
    };
    const events: WorkerEvents = new EventEmitter();
    // Jobs are locked in the name of the pool that took them (graphile-worker takes them for its workers in batches), or of a worker.
    events.on('pool:create', ({ workerPool }) => this.workers.add(workerPool.id));
    events.on('worker:create', ({ worker }) => this.workers.add(worker.workerId));
    events.on('worker:stop', ({ worker }) => this.workers.delete(worker.workerId));
    this.utils = await makeWorkerUtils({ connectionString: this.options.databaseUrl, logger: quietJobEngineLogger });
    this.runner = await run({
      connectionString: this.options.databaseUrl,
      concurrency: this.options.concurrency,
      maxPoolSize: this.options.concurrency + 2,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: quietJobEngineLogger,
      events,
      taskList: { 'webhooks.fan_out': fanOut, 'webhooks.deliver': deliver },
    });
    const beatEveryMs = Math.max(1000, Math.floor(this.options.lostAfterMs / 5));
    this.heartbeat = startPeriodicTask('WebhookWorkers', 0, beatEveryMs, () => this.beat());
    this.logger.debug({ concurrency: this.options.concurrency }, 'Delivering webhooks');
  }

  /** This process's workers are alive; those silent past the limit are dead, and their jobs go back to the queue. */
  private async beat(): Promise<void> {
    const ids = [...this.workers];
    if (ids.length > 0) {
      await this.sql.query(
        `INSERT INTO job_workers (worker_id, seen_at) SELECT unnest($1::text[]), now() ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`,
        [ids],
      );
    }
    const lost = await this.sql.query<{ worker_id: string }>(
      `DELETE FROM job_workers WHERE seen_at < now() - make_interval(secs => $1) AND NOT (worker_id = ANY($2::text[])) RETURNING worker_id`,
      [this.options.lostAfterMs / 1000, ids],
    );
    if (lost.length === 0) return;
    const workerIds = lost.map((row) => row.worker_id);
    await this.utils!.forceUnlockWorkers(workerIds);
    this.logger.warn({ workers: workerIds.length }, 'Delivering processes went silent: the attempts they held are handed to the others');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.heartbeat?.stop();
    await this.runner?.stop();
    // Stopped cleanly: its workers released their jobs, and are not to be taken for dead.
    if (this.runner && this.workers.size > 0) {
      await this.sql.query(`DELETE FROM job_workers WHERE worker_id = ANY($1::text[])`, [[...this.workers]]).catch(() => undefined);
    }
    await this.utils?.release();
  }
}
