import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppOptions, createApp, drainAndClose } from './bootstrap';
import type { Logger as PinoInstance } from 'pino';
import { createBaseLogger, createRequestLogDestination } from './common/runtime/logging';
import type { Tracing } from './common/runtime/start-tracing';
import { GatewaySettings } from './config/load-config';
import { DevelopmentProviders, GatewayConfig } from './config/gateway-config';
import { shutdownTimes } from './config/provider-call';
import { DatabaseHandle, resolveDatabase } from './database/database-handle';
import { UpstreamSettings } from './upstream/upstream.settings';

/** Something started beside the service (development's sandbox and OpenID provider), closed when it stops. */
export interface Companion {
  close(): Promise<void>;
}

/** What the entry point starts once the database is there: the provider to call, and the application's additions. */
export interface ServicePlan {
  readonly upstream: UpstreamSettings;
  /** The OpenID providers development tooling started, trusted beside the configured ones (GatewayConfig.withDevelopment). */
  readonly development?: DevelopmentProviders;
  readonly companions?: readonly Companion[];
  readonly appOptions?: Omit<AppOptions, 'logStream'>;
  /** Once listening, on the port listened on: part of the start, so a failure here stops everything started, as any other. */
  readonly listening?: (port: number) => Promise<void>;
}

export interface RunningService {
  readonly app: NestFastifyApplication;
  readonly database: DatabaseHandle;
  /** The port listened on (PORT, or the one the system chose for 0). */
  readonly port: number;
  readonly log: PinoInstance;
}

/**
 * Runs the gateway as a process, for an entry point: the service's (src/main.ts) or development's
 * (dev/main.ts, `npm start`). Resolves the database, lets the entry point start what else it needs
 * (`plan`), builds the application and listens. Stops on SIGTERM, SIGINT and SIGHUP (the terminal
 * that ran it closed): readiness and new requests answer 503 while the requests in flight finish,
 * then the companions, the database this process started, and the traces' export. A failed start
 * or stop exits 1; a second signal exits at once.
 */
export async function runService(
  gateway: GatewayConfig,
  tracing: Tracing | undefined,
  plan: (database: DatabaseHandle, log: PinoInstance) => Promise<ServicePlan>,
): Promise<RunningService> {
  const config = gateway.settings;
  const log = createBaseLogger(config.LOG_LEVEL);
  const requestLog = createRequestLogDestination();
  const exit: (code: number) => never = (code) => {
    requestLog.flushSync();
    process.exit(code);
  };
  // However the process ends (a crash included), the lines still buffered are written first.
  process.once('exit', () => requestLog.flushSync());

  let database: DatabaseHandle | undefined;
  let companions: readonly Companion[] = [];
  let app: NestFastifyApplication | undefined;
  let stopping = false;

  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) {
      log.warn({ signal }, 'Second signal: exiting now');
      exit(1);
    }
    stopping = true;
    log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'Shutting down: readiness is 503, in-flight requests are finishing');
    // After the grace period, the work behind cut connections may still record its outcome: at
    // most one provider call with its retries.
    const { settleMs, deadlineMs } = shutdownTimes(config);
    // Whatever happens below, the process ends: a hung close must not keep a replica half-alive.
    setTimeout(() => {
      log.error('Shutdown did not finish in time: exiting');
      exit(1);
    }, deadlineMs).unref();
    try {
      if (app) {
        const { cut, unsettled } = await drainAndClose(app, config.SHUTDOWN_GRACE_MS, settleMs);
        if (cut > 0) log.warn({ cut, unsettled }, 'Grace period over: the connections of unfinished requests were closed');
      }
      for (const companion of companions) await companion.close();
      await database?.stop();
      // The spans of the last requests are exported before the process ends.
      await tracing?.shutdown().catch((error: unknown) => log.warn({ err: error }, 'Traces could not be exported at shutdown'));
      // The request log's last lines, written before the line that says the service stopped.
      await requestLog.drain();
      log.info('Stopped');
      exit(0);
    } catch (error) {
      log.error({ err: error }, 'Shutdown failed');
      exit(1);
    }
  };
  // SIGHUP: the terminal that ran the service was closed. An embedded PostgreSQL, in a process
  // group of its own, does not hear it: the service stops it, as on any other stop.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));

  try {
    database = await resolveDatabase(config, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      debug: (m) => log.debug({ component: 'embedded-postgres' }, m),
    });
    log.info(`Database: ${database.description}`);
    const { upstream, development, companions: planned = [], appOptions, listening } = await plan(database, log);
    companions = planned;
    app = await createApp(development ? gateway.withDevelopment(development) : gateway, database, upstream, { ...appOptions, logStream: requestLog });
    await app.listen({ port: config.PORT, host: config.HOST });
    await listening?.(portOf(app, config));
  } catch (error) {
    log.fatal({ err: error }, 'Start-up failed');
    await app?.close().catch(() => undefined);
    for (const companion of companions) await companion.close().catch(() => undefined);
    await database?.stop().catch(() => undefined);
    exit(1);
  }
  return { app, database, port: portOf(app, config), log };
}

/** The port listened on (PORT, or the one the system chose for 0). */
function portOf(app: NestFastifyApplication, config: GatewaySettings): number {
  const address = app.getHttpServer().address();
  return typeof address === 'object' && address ? address.port : config.PORT;
}

/** The address the service is reached at, for the start-up log: localhost when it listens everywhere. */
export function shownBaseUrl(config: GatewaySettings, port: number): string {
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
  return `http://${host}:${port}`;
}
