// The tracing SDK first: it instruments http and pg only if it starts before anything requires them.
import { startTracing } from './common/runtime/start-tracing';
const tracing = startTracing();
import 'reflect-metadata';
import { readGatewayConfigOrExit } from './config/gateway-config';
import { runService, shownBaseUrl } from './serve';
import { liveUpstreamSettings } from './upstream/upstream.settings';

/**
 * The service, as production runs it (`npm run start:prod`, the image): live mode, the provider at
 * UPSTREAM_BASE_URL, PostgreSQL at DATABASE_URL. What `npm start` adds for development (the
 * sandbox, the embedded PostgreSQL, the development OpenID provider, demo data, the web app) is
 * dev/main.ts, which this build need not contain.
 */
async function main(): Promise<void> {
  const gateway = readGatewayConfigOrExit({ live: true });
  const config = gateway.settings;
  const { log, port } = await runService(gateway, tracing, () => Promise.resolve({ upstream: liveUpstreamSettings(config) }));
  log.info({ upstream: new URL(config.UPSTREAM_BASE_URL!).origin }, 'Live mode');
  if (tracing) log.info('Tracing on: spans are exported over OTLP, as the OTEL_* variables say');
  const baseUrl = shownBaseUrl(config, port);
  log.info({ url: baseUrl, docs: config.DOCS_ENABLED ? `${baseUrl}/docs` : undefined }, 'Partner gateway listening');
}

void main();
