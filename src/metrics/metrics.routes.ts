import type { FastifyInstance } from 'fastify';
import { PrometheusMetrics } from './prometheus.metrics';

/**
 * GET /metrics (Prometheus text format), served by Fastify directly so that it stays plain text,
 * and the request-duration histogram fed from every response.
 */
export function serveMetrics(fastify: FastifyInstance, metrics: PrometheusMetrics): void {
  fastify.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw path: one series per route, whatever the ids in it.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestServed(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  fastify.get('/metrics', async (_request, reply) => {
    const { contentType, text } = await metrics.render();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(text);
  });
}
