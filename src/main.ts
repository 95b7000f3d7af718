// First: the tracing SDK instruments http and pg only if it starts before anything requires them.
import { startTracing } from './common/runtime/start-tracing';
const tracing = startTracing();
import 'reflect-metadata';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createDevClientsIfNone, devTokensBanner } from './auth/dev-clients';
import { withApiClientsAsOwner } from './auth/persistence/api-clients-as-owner';
import { createApp, drainAndClose } from './bootstrap';
import { createBaseLogger, createRequestLogDestination } from './common/runtime/logging';
import { readConfigOrExit } from './config/load-config';
import { corsOrigins } from './config/env.schema';
import { shutdownTimes } from './config/provider-call';
import { DatabaseHandle, resolveDatabase } from './database/database-handle';
import { RunningSandbox, sandboxFilesUnder, startSandbox } from './sandbox/sandbox.runner';
import { createDemoCustomer, demoCustomerFile, readDemoCustomer } from './demo-customer';
import { DevIdentityProvider, startDevIdentityProvider } from './sandbox/dev-identity-provider';
import { liveUpstreamSettings, sandboxUpstreamSettings, UpstreamSettings } from './upstream/upstream.settings';

async function main(): Promise<void> {
  const config = readConfigOrExit();
  const log = createBaseLogger(config.LOG_LEVEL);
  const requestLog = createRequestLogDestination();
  const exit: (code: number) => never = (code) => {
    requestLog.flushSync();
    process.exit(code);
  };
  const sandboxMode = !config.UPSTREAM_BASE_URL;
  const embeddedDefaults = sandboxMode && !config.DATABASE_URL;

  let database: DatabaseHandle | undefined;
  let sandbox: RunningSandbox | undefined;
  let identityProvider: DevIdentityProvider | undefined;
  let app: NestFastifyApplication | undefined;
  let stopping = false;
  // The demo customer of an earlier start, if any (sandbox mode with embedded defaults only).
  let demoCustomerId = embeddedDefaults ? readDemoCustomer(demoCustomerFile(config.DATA_DIR)) : undefined;

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
      await sandbox?.close();
      await identityProvider?.close();
      await database?.stop();
      // The spans of the last requests are exported before the process ends.
      await tracing?.shutdown().catch((error: unknown) => log.warn({ err: error }, 'Traces could not be exported at shutdown'));
      log.info('Stopped');
      exit(0);
    } catch (error) {
      log.error({ err: error }, 'Shutdown failed');
      exit(1);
    }
  };
  // SIGHUP: the terminal that ran `npm start` was closed. The embedded PostgreSQL, in a process
  // group of its own, does not hear it: the service stops it, as on any other stop.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));

  try {
    database = await resolveDatabase(config, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      debug: (m) => log.debug({ component: 'embedded-postgres' }, m),
    });
    log.info(`Database: ${database.description}`);
    let upstream: UpstreamSettings;
    if (sandboxMode) {
      const files = sandboxFilesUnder(config.DATA_DIR);
      sandbox = await startSandbox({
        port: config.SANDBOX_PORT,
        keys: { dir: files.keysDir },
        bearerToken: config.SANDBOX_BEARER_TOKEN,
        stateFile: files.stateFile,
      });
      log.warn({ sandbox: sandbox.baseUrl }, 'Sandbox provider running in-process; the gateway calls it over loopback');
      upstream = sandboxUpstreamSettings(config, sandbox);
      if (!config.OIDC_ISSUER) {
        const gatewayOrigins = [`http://127.0.0.1:${config.PORT}`, `http://localhost:${config.PORT}`];
        identityProvider = await startDevIdentityProvider({
          port: config.DEV_OIDC_PORT,
          audience: config.OIDC_AUDIENCE,
          keysDir: files.keysDir,
          swaggerRedirectUris: gatewayOrigins.map((origin) => `${origin}/oauth2-redirect.html`),
        });
        log.warn(
          { issuer: identityProvider.issuer },
          'Development OpenID provider running in-process: end users demo and alex (password: the name); web apps log in through it (/app/)',
        );
      }
    } else {
      upstream = liveUpstreamSettings(config);
    }
    app = await createApp(config, database, upstream, {
      logStream: requestLog,
      demoCustomerId: () => demoCustomerId,
      devIssuer: identityProvider?.issuer,
      webApp: identityProvider !== undefined,
    });
    await app.listen({ port: config.PORT, host: config.HOST });
    if (identityProvider) {
      // The gateway's web client at the development provider: its callback and logout URIs on the port now listened on.
      const listening = app.getHttpServer().address();
      const origin = config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${typeof listening === 'object' && listening ? listening.port : config.PORT}`;
      await identityProvider.setWebOrigins([origin, ...corsOrigins(config)]);
    }
  } catch (error) {
    log.fatal({ err: error }, 'Start-up failed');
    await app?.close().catch(() => undefined);
    await sandbox?.close().catch(() => undefined);
    await identityProvider?.close().catch(() => undefined);
    await database?.stop().catch(() => undefined);
    exit(1);
  }

  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const shownHost = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
  const baseUrl = `http://${shownHost}:${port}`;

  // The reference web app: its login must start and end on the gateway's public origin, where its cookie lives.
  const webAppUrl = identityProvider ? `${config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`}/app/` : undefined;

  if (sandboxMode) {
    log.warn('SANDBOX MODE: UPSTREAM_BASE_URL is not set; nothing reaches a real provider.');
  } else {
    log.info({ upstream: new URL(config.UPSTREAM_BASE_URL).origin }, 'Live mode');
  }
  if (embeddedDefaults) {
    // The service's role only reads clients: the first ones are made as the schema's owner.
    const tokens = await withApiClientsAsOwner(database, (clients) => createDevClientsIfNone(clients, config.DEFAULT_TENANT));
    if (tokens) {
      try {
        demoCustomerId = await createDemoCustomer(baseUrl, tokens.partner, demoCustomerFile(config.DATA_DIR), identityProvider ? 'demo' : undefined);
        log.info({ customerId: demoCustomerId }, 'Made the demo customer: Swagger UI’s examples use it');
      } catch (error) {
        log.warn({ err: error }, 'The demo customer could not be made: Swagger UI’s examples name a customer no one has');
      }
      process.stdout.write(devTokensBanner(tokens, baseUrl, demoCustomerId, identityProvider?.issuer, webAppUrl));
    }
  }
  if (tracing) log.info('Tracing on: spans are exported over OTLP, as the OTEL_* variables say');
  log.info(
    {
      url: baseUrl,
      docs: config.DOCS_ENABLED ? `${baseUrl}/docs` : undefined,
      webApp: webAppUrl,
    },
    'Partner gateway listening',
  );
}

void main();
