import { Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PeriodicTask, startPeriodicTask } from '../common/runtime/periodic-task';
import type { IdempotencyEnvironment } from '../config/environment/idempotency.environment';
import type { UpstreamEnvironment } from '../config/environment/upstream.environment';
import { longestProviderCallMs } from '../config/provider-call';
import { IdempotencyStore } from './domain/idempotency-store.port';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyOptions, IdempotencyService } from './domain/idempotency.service';
import { ProviderWrites } from './domain/provider-writes.service';
import { IdempotencyKeyEntity } from './persistence/idempotency-key.entity';
import { TypeOrmIdempotencyRepository } from './persistence/typeorm-idempotency.repository';

const HOUR_MS = 60 * 60 * 1000;
/** How much longer than the slowest provider call a claim lasts before another attempt may take it over. */
export const CLAIM_MARGIN_MS = 10_000;

/** Expired keys go hourly; until then an expired key is simply claimed afresh. */
@Injectable()
export class IdempotencyPurgeSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: PeriodicTask;

  constructor(private readonly idempotency: IdempotencyService) {}

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask('IdempotencyPurge', 30_000, HOUR_MS, () => this.idempotency.purgeExpired());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}

@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKeyEntity]), AuditModule],
  providers: [
    TypeOrmIdempotencyRepository,
    { provide: IdempotencyStore, useExisting: TypeOrmIdempotencyRepository },
    {
      provide: IdempotencyOptions,
      inject: [ConfigService],
      useFactory: (
        config: ConfigService<IdempotencyEnvironment & Pick<UpstreamEnvironment, 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRY_MAX'>, true>,
      ): IdempotencyOptions => ({
        ttlMs: config.getOrThrow('IDEMPOTENCY_TTL_HOURS', { infer: true }) * HOUR_MS,
        // Longer than the slowest provider call, by a margin.
        lockMs:
          longestProviderCallMs({
            UPSTREAM_TIMEOUT_MS: config.getOrThrow('UPSTREAM_TIMEOUT_MS', { infer: true }),
            UPSTREAM_RETRY_MAX: config.getOrThrow('UPSTREAM_RETRY_MAX', { infer: true }),
          }) + CLAIM_MARGIN_MS,
      }),
    },
    IdempotencyService,
    ProviderWrites,
    IdempotencyPurgeSchedule,
  ],
  exports: [IdempotencyService, ProviderWrites],
})
export class IdempotencyModule {}
