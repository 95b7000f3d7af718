import { Global, Module } from '@nestjs/common';
import { Metrics } from '../common/domain/metrics.port';
import { PrometheusMetrics } from './prometheus.metrics';

@Global()
@Module({
  providers: [PrometheusMetrics, { provide: Metrics, useExisting: PrometheusMetrics }],
  exports: [Metrics, PrometheusMetrics],
})
export class MetricsModule {}
