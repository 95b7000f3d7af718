import { ErrorDocs } from '../common/http/error-docs';
import { corsOrigins, operationalAccess } from './env.schema';
import { trustedIssuers, type TrustedIssuer } from './end-user-settings';
import { EnvironmentChecks, GatewaySettings, readConfigOrExit } from './load-config';
import { staffProvider, type StaffProvider } from './staff-settings';
import { readTrustedProxies, type TrustedProxies } from './trusted-proxies';

/**
 * What development tooling (dev/) adds to the configuration of the service it starts: its OpenID
 * providers, trusted beside the configured issuers, with the clients the gateway and Swagger UI use
 * there. Production has none.
 */
export interface DevelopmentProviders {
  /** The partner's provider's stand-in (end users), when OIDC_ISSUER names none. */
  readonly identityProvider?: {
    readonly issuer: string;
    readonly webClient: { readonly clientId: string; readonly secret: string };
    readonly swaggerClientId: string;
  };
  /** The company's provider's stand-in (staff), when STAFF_OIDC_ISSUER names none. */
  readonly staffProvider?: { readonly issuer: string; readonly swaggerClientId: string };
}

/**
 * The service's configuration, made once at start from the validated settings
 * (`validateEnvironment`), with what several features need worked out once, here: the trusted
 * issuers, the staff provider, the trusted proxies, the CORS origins, who may read /docs and
 * /metrics. It is the application's one configuration object: provided to Nest (each feature also
 * reads its own variables through Nest's ConfigService) and handed to the entry points, never
 * rebuilt. Development tooling adds its providers through `withDevelopment`.
 */
export class GatewayConfig<Settings extends GatewaySettings = GatewaySettings> {
  /** End users' OpenID providers: OIDC_ISSUER (or the development one), then OIDC_ISSUERS. */
  readonly issuers: readonly TrustedIssuer[];
  /** The company's OpenID provider for staff (STAFF_OIDC_ISSUER, or the development one), when there is one. */
  readonly staffProvider: StaffProvider | undefined;
  readonly trustedProxies: TrustedProxies;
  readonly corsOrigins: readonly string[];
  /** Whether /docs and /metrics need an admin (or, for /metrics, METRICS_TOKEN). */
  readonly access: ReturnType<typeof operationalAccess>;
  /** Where each error code's entry is read (`error.doc_url`). */
  readonly errorDocs: ErrorDocs;

  constructor(
    /** Every variable, validated, each feature's with its defaults. */
    readonly settings: Settings,
    readonly development: DevelopmentProviders = {},
  ) {
    this.issuers = trustedIssuers(settings, development.identityProvider?.issuer);
    this.staffProvider = staffProvider(settings, development.staffProvider);
    this.trustedProxies = readTrustedProxies(settings.TRUST_PROXY, settings);
    this.corsOrigins = corsOrigins(settings);
    this.access = operationalAccess(settings);
    this.errorDocs = new ErrorDocs(settings);
  }

  /** The same configuration with development tooling's providers trusted too. */
  withDevelopment(development: DevelopmentProviders): GatewayConfig<Settings> {
    return new GatewayConfig(this.settings, development);
  }

  /** Live mode: a real provider is named (UPSTREAM_BASE_URL). */
  get live(): boolean {
    return this.settings.UPSTREAM_BASE_URL !== undefined;
  }
}

/**
 * For the service's entry points: the settings read and validated (`readConfigOrExit`), and the
 * configuration made of them; on a bad configuration, the one message naming every problem on
 * stderr and exit 1.
 */
export function readGatewayConfigOrExit<Also extends object = object>(checks: EnvironmentChecks<Also> = {}): GatewayConfig<GatewaySettings & Also> {
  const settings = readConfigOrExit(checks);
  try {
    return new GatewayConfig(settings);
  } catch (error) {
    process.stderr.write(`Invalid configuration: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
