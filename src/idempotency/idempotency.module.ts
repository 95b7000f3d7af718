import { BeforeApplicationShutdown, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BackgroundWork } from '../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../common/runtime/periodic-task';
import type { IdempotencyEnvironment } from '../config/environment/idempotency.environment';
import type { UpstreamEnvironment } from '../config/environment/upstream.environment';
import { longestProviderCallMs } from '../config/provider-call';
import { IdempotencyStore } from './domain/idempotency-store.port';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyOptions, IdempotencyService } from './domain/idempotency.service';
import { HeldOutcomes, HeldOutcomesOptions } from './domain/held-outcomes';
import { Clock } from '../common/domain/clock.port';
import { Metrics } from '../common/domain/metrics.port';
import { DomainError } from '../common/domain/domain-error';
import { ProviderWrites } from './domain/provider-writes.service';
import { IdempotencyKeyEntity } from './persistence/idempotency-key.entity';
import { PostgresIdempotencyRepository } from './persistence/postgres-idempotency.repository';
import { KeptAnswersSealing } from './persistence/kept-answers-sealing';

const HOUR_MS = 60 * 60 * 1000;
/** How much longer than the slowest provider call a claim lasts before another attempt may take it over. */
export const CLAIM_MARGIN_MS = 10_000;

/** How long a request's own writes may take after its provider call, for how long it stays in flight. */
export const WRITES_MARGIN_MS = 2_000;
/** How long a request finding its reference in flight waits for that attempt to end (IdempotencyOptions.settleWaitMs). */
export const SETTLE_WAIT_MS = 1_000;
/** At most this many outcomes are held while the database is away; each is a few hundred bytes and its result. */
export const MOST_HELD_OUTCOMES = 10_000;
/** How often held outcomes are tried again. */
export const HELD_RETRY_MS = 200;
/** At shutdown, how long held outcomes are tried before the rest is left to reconciliation (within the shutdown's last 10 s). */
export const HELD_DRAIN_MS = 5_000;

/** Outcomes still held at shutdown are written first, while the database connections are still open. */
@Injectable()
export class HeldOutcomesAtShutdown implements BeforeApplicationShutdown {
  constructor(private readonly held: HeldOutcomes) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.held.drain(Date.now() + HELD_DRAIN_MS);
  }
}

/** Expired keys go hourly; until then an expired key is simply claimed afresh. */
@Injectable()
export class IdempotencyPurgeSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: PeriodicTask;

  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly background: BackgroundWork,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.background.runs) return;
    this.task = startPeriodicTask('IdempotencyPurge', 30_000, HOUR_MS, () => this.idempotency.purgeExpired());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}

@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKeyEntity]), AuditModule],
  providers: [
    PostgresIdempotencyRepository,
    { provide: IdempotencyStore, useExisting: PostgresIdempotencyRepository },
    {
      provide: IdempotencyOptions,
      inject: [ConfigService],
      useFactory: (
        config: ConfigService<IdempotencyEnvironment & Pick<UpstreamEnvironment, 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRY_MAX'>, true>,
      ): IdempotencyOptions => {
        const longest = longestProviderCallMs({
          UPSTREAM_TIMEOUT_MS: config.getOrThrow('UPSTREAM_TIMEOUT_MS', { infer: true }),
          UPSTREAM_RETRY_MAX: config.getOrThrow('UPSTREAM_RETRY_MAX', { infer: true }),
        });
        return {
          ttlMs: config.getOrThrow('IDEMPOTENCY_TTL_HOURS', { infer: true }) * HOUR_MS,
          // Longer than the slowest provider call, by a margin.
          lockMs: longest + CLAIM_MARGIN_MS,
          workMs: longest + WRITES_MARGIN_MS,
          settleWaitMs: SETTLE_WAIT_MS,
        };
      },
    },
    {
      provide: HeldOutcomes,
      inject: [Clock, Metrics],
      useFactory: (clock: Clock, metrics: Metrics) => {
        const options: HeldOutcomesOptions = { max: MOST_HELD_OUTCOMES, retryEveryMs: HELD_RETRY_MS };
        return new HeldOutcomes(options, (error) => error instanceof DomainError && error.code === 'DATABASE.UNAVAILABLE', clock, metrics);
      },
    },
    HeldOutcomesAtShutdown,
    IdempotencyService,
    ProviderWrites,
    IdempotencyPurgeSchedule,
    KeptAnswersSealing,
  ],
  exports: [IdempotencyService, ProviderWrites],
})
export class IdempotencyModule {}
