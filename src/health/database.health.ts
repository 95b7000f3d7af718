import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/** Readiness of PostgreSQL: a round trip through the pool, bounded in time. */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  check(key: 'database', timeoutMs: number): PromiseLike<HealthIndicatorResult<'database'>> {
    return this.indicators
      .check(key)
      .attempt(async () => {
        await this.dataSource.query('SELECT 1');
      })
      .withTimeout(timeoutMs);
  }
}
