import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { useContainer } from 'class-validator';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { requestContextOf } from './common/request-context';
import { REQUEST_ID_HEADER, requestIdFor } from './common/request-id';
import { AppConfig } from './config/load-config';
import { setupSwagger } from './swagger';
import { UpstreamSettings } from './upstream/upstream.settings';

/**
 * Builds the application exactly as production runs it — adapter, hooks, global pipe, filter and
 * interceptor, Swagger — so tests exercise the real thing. Does not listen.
 */
export async function createApp(
  config: AppConfig,
  databaseUrl: string,
  upstream: UpstreamSettings,
  options: { logStream?: DestinationStream } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    genReqId: requestIdFor,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    return503OnClosing: true,
    bodyLimit: config.BODY_LIMIT_BYTES,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ config, databaseUrl, upstream, logStream: options.logStream }), adapter, {
    bufferLogs: true,
    abortOnError: false,
    // Fastify's own JSON parser only (with bodyLimit): no urlencoded parser, so a form is a 415.
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  // Constraints that need the Clock (the expiry rule, past dates) come from Nest's container.
  useContainer(app, { fallbackOnErrors: true });
  const fastify = app.getHttpAdapter().getInstance();
  // JSON only: without this Fastify would parse text/plain, and such a body must be a 415.
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('onRequest', async (request, reply) => {
    requestContextOf(request.raw).sourceIp = request.ip;
    void reply.header(REQUEST_ID_HEADER, request.id);
  });
  if (config.DOCS_ENABLED) setupSwagger(app);
  await app.init();
  return app;
}
