import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { run, type Runner, type Task } from 'graphile-worker';
import { quietJobEngineLogger } from '../../../database/typeorm-options';
import { WebhookDelivery } from './webhook-delivery.service';

/** Where the job engine connects, and how many deliveries one process attempts at once. */
export abstract class DeliveryRunnerOptions {
  abstract readonly databaseUrl: string;
  abstract readonly concurrency: number;
  /** Off: this process runs no delivery (another does). */
  abstract readonly enabled: boolean;
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
 */
@Injectable()
export class DeliveryRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private runner?: Runner;

  constructor(
    private readonly delivery: WebhookDelivery,
    private readonly options: DeliveryRunnerOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.enabled) return;
    const fanOut: Task = async (payload) => {
      await this.delivery.fanOut(payloadId(payload, 'event_id'));
    };
    const deliver: Task = async (payload) => {
      await this.delivery.deliver(payloadId(payload, 'delivery_id'));
    };
    this.runner = await run({
      connectionString: this.options.databaseUrl,
      concurrency: this.options.concurrency,
      maxPoolSize: this.options.concurrency + 2,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: quietJobEngineLogger,
      taskList: { 'webhooks.fan_out': fanOut, 'webhooks.deliver': deliver },
    });
    this.logger.debug({ concurrency: this.options.concurrency }, 'Delivering webhooks');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
  }
}
