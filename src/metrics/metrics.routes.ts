import type { FastifyInstance } from 'fastify';
import type { EdgeStage } from '../common/http/edge-stage';
import { PrometheusMetrics } from './prometheus.metrics';

/** The metrics stage: the request-duration histogram, fed from every response. */
export function metricsStage(metrics: PrometheusMetrics): EdgeStage {
  return {
    name: 'metrics',
    // The route pattern, never the raw path: one series per route, whatever the ids in it.
    onResponse: (request, reply) => metrics.requestServed(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000),
  };
}

/** GET /metrics (Prometheus text format), served by Fastify directly so that it stays plain text. */
export function serveMetrics(fastify: FastifyInstance, metrics: PrometheusMetrics): void {
  fastify.get('/metrics', async (_request, reply) => {
    const { contentType, text } = await metrics.render();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(text);
  });
}
