// The tracing SDK first: it instruments http and pg only if it starts before anything requires them.
import { startTracing } from './common/runtime/start-tracing';
const tracing = startTracing();
import 'reflect-metadata';
import { GatewayConfig } from './config/gateway-config';
import { readConfigOrExit } from './config/load-config';
import { runService } from './serve';
import { liveUpstreamSettings } from './upstream/upstream.settings';

/**
 * The worker (`node dist/src/worker.js`, the image's second command): the service's background work
 * (docs/operations.md, "The worker"): webhook delivery, audit sealing, retention, the
 * reconciliation count, the sweeps and the data upgrades, whatever PROCESS_ROLE says. It listens
 * on PORT as the API does, for its probes and metrics: no partner traffic is sent to it. API replicas
 * (PROCESS_ROLE=api) run none of this; workers side by side share it (the job engine's locks, the
 * sealer's own).
 */
async function worker(): Promise<void> {
  const settings = { ...readConfigOrExit({ live: true }), PROCESS_ROLE: 'worker' as const };
  const gateway = new GatewayConfig(settings);
  const { log, port } = await runService(gateway, tracing, () => Promise.resolve({ upstream: liveUpstreamSettings(settings) }));
  log.info({ port, delivering: settings.WEBHOOK_DELIVERY }, 'Partner gateway worker running');
}

void worker();
