// The tracing SDK first: it instruments http and pg only if it starts before anything requires them.
import { startTracing } from '../src/common/runtime/start-tracing';
const tracing = startTracing();
import 'reflect-metadata';
import './local-database';
import { DevelopmentEnvironment } from './development.environment';
import { withApiClientsAsOwner } from '../src/auth/persistence/api-clients-as-owner';
import { readGatewayConfigOrExit } from '../src/config/gateway-config';
import { Companion, runService, shownBaseUrl } from '../src/serve';
import { liveUpstreamSettings, sandboxUpstreamSettings } from '../src/upstream/upstream.settings';
import { createDemoCustomer, demoCustomerFile, readDemoCustomer } from './demo/demo-customer';
import { createDevClientsIfNone, devTokensBanner } from './demo/dev-clients';
import { asTrustedProvider, asTrustedStaffProvider, DevIdentityProvider, startDevIdentityProvider } from './identity-provider/dev-identity-provider';
import { sandboxFilesUnder, startSandbox } from './sandbox/sandbox.runner';
import { serveWebApp } from './web-app/serve-web-app';

/**
 * `npm start`: the service with development's defaults. Without UPSTREAM_BASE_URL it runs in
 * sandbox mode: the provider's stand-in in-process (over loopback), the development OpenID provider
 * (unless OIDC_ISSUER names one) and the reference web app at /app/. Without DATABASE_URL as well,
 * the embedded PostgreSQL under DATA_DIR (./local-database), and on the first start two clients and
 * a demo customer, whose tokens and id it prints once. With UPSTREAM_BASE_URL it is the service as
 * src/main.ts runs it, with the embedded database where DATABASE_URL is not set.
 */
async function main(): Promise<void> {
  const gateway = readGatewayConfigOrExit({ also: [DevelopmentEnvironment] });
  const config = gateway.settings;
  const sandboxMode = !config.UPSTREAM_BASE_URL;
  const embeddedDefaults = sandboxMode && !config.DATABASE_URL;
  // The demo customer of an earlier start, if any (sandbox mode with embedded defaults only).
  let demo = embeddedDefaults ? readDemoCustomer(demoCustomerFile(config.DATA_DIR)) : undefined;
  let identityProvider: DevIdentityProvider | undefined;
  let staffProvider: DevIdentityProvider | undefined;
  /** Where browsers reach the gateway: the web app's login starts and ends there, where its cookie lives. */
  const publicOrigin = (port: number) => config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`;

  const { port, log } = await runService(gateway, tracing, async (database, log) => {
    if (!sandboxMode) return { upstream: liveUpstreamSettings(config) };
    const companions: Companion[] = [];
    const files = sandboxFilesUnder(config.DATA_DIR);
    const sandbox = await startSandbox({
      port: config.SANDBOX_PORT,
      keys: { dir: files.keysDir },
      bearerToken: config.SANDBOX_BEARER_TOKEN,
      stateFile: files.stateFile,
    });
    companions.push(sandbox);
    log.warn({ sandbox: sandbox.baseUrl }, 'Sandbox provider running in-process; the gateway calls it over loopback');
    // The development providers, where no real one is configured: the partner's (end users) and the company's (staff).
    const swaggerRedirectUris = [`http://127.0.0.1:${config.PORT}`, `http://localhost:${config.PORT}`].map((origin) => `${origin}/oauth2-redirect.html`);
    const startProvider = async (options: { port: number; audience: string; staff?: boolean }, running: string): Promise<DevIdentityProvider> => {
      let provider: DevIdentityProvider;
      try {
        provider = await startDevIdentityProvider({ ...options, keysDir: files.keysDir, swaggerRedirectUris });
      } catch (error) {
        await Promise.all(companions.map((companion) => companion.close()));
        throw error;
      }
      companions.push(provider);
      log.warn({ issuer: provider.issuer }, running);
      return provider;
    };
    if (!config.OIDC_ISSUER) {
      identityProvider = await startProvider(
        { port: config.DEV_OIDC_PORT, audience: config.OIDC_AUDIENCE },
        'Development OpenID provider running in-process: end users demo and alex (password: the name); web apps log in through it (/app/)',
      );
    }
    if (!config.STAFF_OIDC_ISSUER) {
      staffProvider = await startProvider(
        { port: config.DEV_STAFF_OIDC_PORT, audience: config.STAFF_OIDC_AUDIENCE, staff: true },
        'Development staff provider running in-process: sam (support), casey (compliance), oli (operator), pat (no second factor); password: the name',
      );
    }
    return {
      upstream: sandboxUpstreamSettings(config, sandbox),
      // The development providers, trusted through the configuration as the configured ones are.
      development: {
        ...(identityProvider ? { identityProvider: asTrustedProvider(identityProvider.issuer) } : {}),
        ...(staffProvider ? { staffProvider: asTrustedStaffProvider(staffProvider.issuer) } : {}),
      },
      companions,
      appOptions: { demo: () => demo, ...(identityProvider ? { routes: serveWebApp } : {}) },
      // Part of the start: a failure here stops the sandbox, the provider and the embedded database too.
      listening: async (port) => {
        const origin = publicOrigin(port);
        // The gateway's web client at the development provider: its callback and logout URIs on the port now listened on.
        if (identityProvider) await identityProvider.setWebOrigins([origin, ...gateway.corsOrigins]);
        if (!embeddedDefaults) return;
        // The service's role only reads clients: the first ones are made as the schema's owner.
        const tokens = await withApiClientsAsOwner(database, (clients) => createDevClientsIfNone(clients, config.DEFAULT_TENANT));
        if (!tokens) return;
        const baseUrl = shownBaseUrl(config, port);
        try {
          demo = await createDemoCustomer(baseUrl, tokens.partner, demoCustomerFile(config.DATA_DIR), identityProvider ? 'demo' : undefined);
          log.info(
            { customerId: demo.customerId, bankAccountId: demo.bankAccountId },
            'Made the demo customer and its account: Swagger UI’s examples use them',
          );
        } catch (error) {
          log.warn({ err: error }, 'The demo customer could not be made: Swagger UI’s examples name a customer no one has');
        }
        process.stdout.write(
          devTokensBanner(tokens, baseUrl, demo?.customerId, identityProvider?.issuer, identityProvider ? `${origin}/app/` : undefined, staffProvider?.issuer),
        );
      },
    };
  });

  const baseUrl = shownBaseUrl(config, port);
  const webAppUrl = identityProvider ? `${publicOrigin(port)}/app/` : undefined;
  if (sandboxMode) {
    log.warn('SANDBOX MODE: UPSTREAM_BASE_URL is not set; nothing reaches a real provider.');
  } else {
    log.info({ upstream: new URL(config.UPSTREAM_BASE_URL).origin }, 'Live mode');
  }
  if (tracing) log.info('Tracing on: spans are exported over OTLP, as the OTEL_* variables say');
  log.info({ url: baseUrl, docs: config.DOCS_ENABLED ? `${baseUrl}/docs` : undefined, webApp: webAppUrl }, 'Partner gateway listening');
}

void main();
