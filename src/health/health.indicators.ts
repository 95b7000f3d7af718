import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { UpstreamCircuit } from '../common/domain/upstream';

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

/**
 * The provider's circuit, reported but never failing readiness: taking replicas out of the load
 * balancer does not bring the provider back, and the circuit already answers 503 for it.
 */
@Injectable()
export class UpstreamCircuitIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly upstream: UpstreamCircuit,
  ) {}

  check(key: 'upstream'): HealthIndicatorResult<'upstream'> {
    return this.indicators.check(key).up({ circuit: this.upstream.circuitState() });
  }
}
