import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { readAuditPublicKeys, readAuditSigningKey } from './audit-keys';
import { readClientPrivateKey, readExtraIssuers, readMetricsToken, readSecretKey, readSecretKeys } from './end-user-settings';
import { readTrustedProxies } from './trusted-proxies';
import { IsFlag, IsIntegerBetween, IsReadableBy, IsUpstreamPublicKey, IsUrlWithProtocol } from './env.validators';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const liveMode = (env: EnvironmentVariables) => Boolean(env.UPSTREAM_BASE_URL);

/**
 * Every environment variable the service reads, with its default. `.env.example` mirrors this
 * class; a test keeps the two in step.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  readonly NODE_ENV: string = 'development';

  @IsIntegerBetween(0, 65535)
  readonly PORT: number = 3000;

  @IsString()
  @MinLength(1)
  readonly HOST: string = '127.0.0.1';

  @IsIn(LOG_LEVELS)
  readonly LOG_LEVEL: LogLevel = 'info';

  /** Required in live mode: production data does not belong in an embedded database. */
  @ValidateIf((env: EnvironmentVariables) => liveMode(env) || env.DATABASE_URL !== undefined)
  @IsUrlWithProtocol(['postgres:', 'postgresql:'], { message: '$property must be a postgres:// URL (required when UPSTREAM_BASE_URL is set)' })
  readonly DATABASE_URL?: string = undefined;

  /**
   * The schema's owner: the migrations run with it, and grant DATABASE_URL's role only what the
   * service needs (src/database/database-roles.ts). Unset: the migrations run with DATABASE_URL,
   * whose role then owns the audit log (reported at start-up and by /health/ready).
   */
  @IsOptional()
  @IsUrlWithProtocol(['postgres:', 'postgresql:'], { message: '$property must be a postgres:// URL' })
  readonly MIGRATIONS_DATABASE_URL?: string = undefined;

  @IsIntegerBetween(1, 200)
  readonly DATABASE_POOL_SIZE: number = 10;

  @IsFlag()
  readonly MIGRATIONS_RUN: boolean = true;

  @IsString()
  @MinLength(1)
  readonly DATA_DIR: string = './.data';

  @IsIntegerBetween(0, 65535)
  readonly EMBEDDED_PG_PORT: number = 0;

  @IsOptional()
  @IsUrlWithProtocol(['http:', 'https:'])
  readonly UPSTREAM_BASE_URL?: string = undefined;

  @ValidateIf(liveMode)
  @IsString({ message: '$property is required when UPSTREAM_BASE_URL is set' })
  @MinLength(1)
  readonly UPSTREAM_BEARER_TOKEN?: string = undefined;

  @ValidateIf(liveMode)
  @IsUpstreamPublicKey()
  readonly UPSTREAM_PUBLIC_KEY?: string = undefined;

  @Matches(/^[A-Za-z][A-Za-z0-9_-]*$/, { message: '$property must be one word, such as Bearer' })
  readonly UPSTREAM_AUTH_SCHEME: string = 'Bearer';

  @Matches(/^\/[A-Za-z0-9/_.-]*$/, { message: '$property must be a path starting with /' })
  readonly UPSTREAM_BANK_ACCOUNT_PATH: string = '/payments/banks/account';

  @IsIn(['jwe', 'none'])
  readonly UPSTREAM_ENCRYPTION: 'jwe' | 'none' = 'jwe';

  @IsIntegerBetween(100, 60_000)
  readonly UPSTREAM_CONNECT_TIMEOUT_MS: number = 2000;

  /** Per attempt, connection to last byte. */
  @IsIntegerBetween(100, 120_000)
  readonly UPSTREAM_TIMEOUT_MS: number = 10_000;

  /** Retries of a GET after a network error, 429 or 5xx. */
  @IsIntegerBetween(0, 5)
  readonly UPSTREAM_RETRY_MAX: number = 2;

  /** Consecutive failures (network, timeout, 5xx) that open the circuit. */
  @IsIntegerBetween(1, 1000)
  readonly UPSTREAM_BREAKER_THRESHOLD: number = 5;

  /** How long the circuit stays open before one trial call. */
  @IsIntegerBetween(100, 600_000)
  readonly UPSTREAM_BREAKER_HALF_OPEN_MS: number = 10_000;

  /** Sandbox mode only: where the in-process sandbox listens (127.0.0.1). */
  @IsIntegerBetween(0, 65535)
  readonly SANDBOX_PORT: number = 4010;

  /** `npm run sandbox` only: the interface the stand-alone sandbox listens on (0.0.0.0 in a container). */
  @IsString()
  @MinLength(1)
  readonly SANDBOX_HOST: string = '127.0.0.1';

  /** Sandbox mode only: the token the sandbox accepts; generated at start-up when unset. */
  @IsOptional()
  @IsString()
  @MinLength(16)
  readonly SANDBOX_BEARER_TOKEN?: string = undefined;

  @IsFlag()
  readonly DOCS_ENABLED: boolean = true;

  /**
   * The proxies in front that are believed about a request's origin (X-Forwarded-For, -Host,
   * -Proto): their addresses or CIDR ranges, comma-separated, or their number; false or 0: none.
   * `true` trusts every hop, so that a caller chooses its own address: refused in production.
   */
  @IsReadableBy(readTrustedProxies)
  readonly TRUST_PROXY: string = 'false';

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  readonly DEFAULT_TENANT: string = 'default';

  /** PCI DSS 10.5.1 keeps a year of audit history; the database refuses a shorter purge. */
  @IsIntegerBetween(365, 3650)
  readonly AUDIT_RETENTION_DAYS: number = 400;

  @IsFlag()
  readonly AUDIT_PURGE_DAILY: boolean = true;

  /**
   * The Ed25519 key that signs audit checkpoints (PEM text or a file's path). Unset: the key in
   * DATA_DIR/audit-signing-key.pem, made at first start. Replicas must share one.
   */
  @IsOptional()
  @IsReadableBy(readAuditSigningKey)
  readonly AUDIT_SIGNING_KEY?: string = undefined;

  /** Retired signing keys' public halves (PEM text or a file's path, one or more blocks): older checkpoints still verify. */
  @IsOptional()
  @IsReadableBy(readAuditPublicKeys)
  readonly AUDIT_PUBLIC_KEYS?: string = undefined;

  /** Seal the audit log into signed checkpoints (docs/security.md). Off only to measure what sealing costs. */
  @IsFlag()
  readonly AUDIT_SEALING: boolean = true;

  /**
   * How long an audit event may wait to be sealed (normally about a second). Beyond it, readiness and
   * /metrics say the sealer lags, and npm run audit:verify reports the events as a finding.
   */
  @IsIntegerBetween(5, 7 * 24 * 3600)
  readonly AUDIT_SEAL_MAX_LAG_SECONDS: number = 300;

  /** How long a reference's result is kept for replay. */
  @IsIntegerBetween(1, 24 * 30)
  readonly IDEMPOTENCY_TTL_HOURS: number = 24;

  /** Larger request bodies are refused with 413. */
  @IsIntegerBetween(1024, 10 * 1024 * 1024)
  readonly BODY_LIMIT_BYTES: number = 65_536;

  /** A request's headers and body must arrive whole within this; past it, a 408 and the connection closed. */
  @IsIntegerBetween(100, 600_000)
  readonly REQUEST_TIMEOUT_MS: number = 30_000;

  /** A request's headers must arrive within this (at most REQUEST_TIMEOUT_MS). */
  @IsIntegerBetween(100, 600_000)
  readonly HEADERS_TIMEOUT_MS: number = 10_000;

  /** An idle keep-alive connection is closed after this: keep it above the load balancer's idle timeout. */
  @IsIntegerBetween(1_000, 600_000)
  readonly KEEP_ALIVE_TIMEOUT_MS: number = 72_000;

  /** Requests per minute per client token; over it, 429 with Retry-After. */
  @IsIntegerBetween(1, 1_000_000)
  readonly RATE_LIMIT_PER_MINUTE: number = 600;

  /** Requests per minute per source IP for calls without a valid client token. */
  @IsIntegerBetween(1, 1_000_000)
  readonly RATE_LIMIT_PER_IP_PER_MINUTE: number = 60;

  /** Shared rate-limit counters for several replicas; unset, each replica counts in memory. */
  @IsOptional()
  @IsUrlWithProtocol(['redis:', 'rediss:'])
  readonly RATE_LIMIT_REDIS_URL?: string = undefined;

  /** Browser origins allowed to call the API, comma-separated; empty: no cross-origin access. */
  @Matches(/^\s*(https?:\/\/[^\s,/]+\s*(,\s*https?:\/\/[^\s,/]+\s*)*)?$/, {
    message: '$property must be a comma-separated list of origins such as https://app.example.com',
  })
  readonly CORS_ORIGINS: string = '';

  /** Live mode: /docs and /docs-json without an admin token. Sandbox mode always serves them openly. */
  @IsFlag()
  readonly DOCS_PUBLIC: boolean = false;

  @IsFlag()
  readonly METRICS_ENABLED: boolean = true;

  /** Live mode: /metrics without an admin token. Sandbox mode always serves it openly. */
  @IsFlag()
  readonly METRICS_PUBLIC: boolean = false;

  /**
   * A credential for /metrics alone (Prometheus's `authorization: { credentials_file }`): the token
   * itself (at least 32 characters) or the path of a file holding it. Set, /metrics takes this bearer
   * token and nothing else, and asks the database for nothing; unset, an admin client's token.
   */
  @IsOptional()
  @IsReadableBy(readMetricsToken)
  readonly METRICS_TOKEN?: string = undefined;

  /**
   * The partner's OpenID provider, whose access tokens identify end users (docs/security.md, "End
   * users"). Its discovery document is read from `<issuer>/.well-known/openid-configuration`.
   * Unset in live mode: only partner and admin client tokens are accepted. Unset in sandbox mode:
   * the development OpenID provider the service starts (DEV_OIDC_PORT).
   */
  @IsOptional()
  @IsUrlWithProtocol(['http:', 'https:'])
  readonly OIDC_ISSUER?: string = undefined;

  /** The `aud` the issuer's access tokens name this service by (RFC 9068; the resource indicator, RFC 8707). */
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  readonly OIDC_AUDIENCE: string = 'urn:partner-gateway';

  /** The tenant OIDC_ISSUER's end users belong to. */
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: '$property must be 1-64 letters, digits, dots, dashes or underscores' })
  readonly OIDC_TENANT: string = 'default';

  /** More issuers, each with its own tenant and audience: a JSON list of {"issuer", "audience", "tenant"}. */
  @IsOptional()
  @IsReadableBy(readExtraIssuers)
  readonly OIDC_ISSUERS?: string = undefined;

  /** FAPI 2.0 mode: an end-user token must be bound to a key (DPoP, RFC 9449); bearer end-user tokens are refused. */
  @IsFlag()
  readonly OIDC_REQUIRE_DPOP: boolean = false;

  /** Leeway for the clocks of the issuer, the apps and this service (exp, nbf, iat; DPoP proofs' iat). */
  @IsIntegerBetween(0, 300)
  readonly OIDC_CLOCK_SKEW_SECONDS: number = 30;

  /** Access tokens that live longer than this (exp - iat) are refused, however they are signed. */
  @IsIntegerBetween(60, 86_400)
  readonly OIDC_MAX_TOKEN_LIFETIME_SECONDS: number = 3600;

  /** How old a DPoP proof may be (its iat); its jti is remembered, across replicas, for this long plus the skew. */
  @IsIntegerBetween(5, 600)
  readonly DPOP_PROOF_MAX_AGE_SECONDS: number = 60;

  /**
   * The key of the end users' pseudonyms (HMAC-SHA256 of issuer and subject): what the audit log,
   * the idempotency store and customer ownership know an end user by. 32 bytes or more, base64 or
   * a file's path. Unset: DATA_DIR/end-user-pseudonym.key, made at first start. Replicas must share
   * one, and it must never change: a new key makes every end user a stranger to their customers.
   */
  @IsOptional()
  @IsReadableBy(readSecretKey)
  readonly END_USER_PSEUDONYM_KEY?: string = undefined;

  /**
   * The origin browsers reach this service at (https://api.partner.example): a web app's login
   * comes back to `<PUBLIC_BASE_URL>/api/v1/session/callback`, its session cookie belongs to this
   * host, and requests with the cookie must come from it or from CORS_ORIGINS. Required with
   * OIDC_CLIENT_ID in production; otherwise it defaults to http://127.0.0.1:<the port listened on>.
   */
  @ValidateIf(
    (env: EnvironmentVariables) => env.PUBLIC_BASE_URL !== undefined || (liveMode(env) && env.NODE_ENV === 'production' && env.OIDC_CLIENT_ID !== undefined),
  )
  @Matches(/^https?:\/\/[^\s/?#]+$/, {
    message: '$property must be an origin such as https://api.partner.example (required with OIDC_CLIENT_ID in production)',
  })
  readonly PUBLIC_BASE_URL?: string = undefined;

  /**
   * Browser sessions for web apps (docs/security.md, "Web apps"): this service's client at
   * OIDC_ISSUER, a confidential one. Unset in live mode: no browser sessions. Unset in sandbox
   * mode: the development provider's `partner-web`.
   */
  @ValidateIf((env: EnvironmentVariables) => env.OIDC_CLIENT_ID !== undefined)
  @Matches(/^[\x21-\x7e]{1,200}$/, { message: '$property must be 1-200 visible ASCII characters' })
  readonly OIDC_CLIENT_ID?: string = undefined;

  /** The client's secret (client_secret_basic). Give this or OIDC_CLIENT_PRIVATE_KEY with OIDC_CLIENT_ID. */
  @ValidateIf(
    (env: EnvironmentVariables) => env.OIDC_CLIENT_SECRET !== undefined || (env.OIDC_CLIENT_ID !== undefined && env.OIDC_CLIENT_PRIVATE_KEY === undefined),
  )
  @IsString({ message: '$property or OIDC_CLIENT_PRIVATE_KEY is required with OIDC_CLIENT_ID' })
  @MinLength(1)
  readonly OIDC_CLIENT_SECRET?: string = undefined;

  /** The client's private key for private_key_jwt (RFC 7523; FAPI 2.0): a private JWK with its `alg` and `kid`, or a file's path. */
  @IsOptional()
  @IsReadableBy(readClientPrivateKey)
  readonly OIDC_CLIENT_PRIVATE_KEY?: string = undefined;

  /**
   * The key the sessions' tokens are sealed with at rest (AES-256-GCM): 32 bytes, hex or base64,
   * or a file's path. Required with OIDC_CLIENT_ID in production: a key made under each pod's own
   * DATA_DIR would open only that pod's sessions. Otherwise unset means DATA_DIR/session.key, made
   * at first start. Replicas must share one; a new key ends every session.
   */
  @ValidateIf((env: EnvironmentVariables) => env.SESSION_KEY !== undefined || (env.NODE_ENV === 'production' && env.OIDC_CLIENT_ID !== undefined))
  // Checked bottom-up: a missing key is named as missing before a present one is read.
  @IsReadableBy(readSecretKey)
  @IsString({ message: '$property is required with OIDC_CLIENT_ID in production: 32 random bytes, base64 (openssl rand -base64 32), shared by every replica' })
  readonly SESSION_KEY?: string = undefined;

  /**
   * Keys SESSION_KEY replaced, comma-separated (each the key, hex or base64, or a file's path):
   * sessions sealed under them still open, and are sealed under SESSION_KEY at their next renewal.
   * Rotating SESSION_KEY with the old one here ends no session.
   */
  @IsOptional()
  @IsReadableBy(readSecretKeys)
  readonly SESSION_PREVIOUS_KEYS?: string = undefined;

  /** A session not used for this long ends. */
  @IsIntegerBetween(60, 86_400)
  readonly SESSION_IDLE_TIMEOUT_SECONDS: number = 1800;

  /** A session ends this long after its login, however much it is used. */
  @IsIntegerBetween(300, 30 * 86_400)
  readonly SESSION_ABSOLUTE_TIMEOUT_SECONDS: number = 43_200;

  /** Sandbox mode: where the development OpenID provider listens (on 127.0.0.1); 0 for any free port. */
  @IsIntegerBetween(0, 65535)
  readonly DEV_OIDC_PORT: number = 4011;

  /** On SIGTERM/SIGINT: how long in-flight requests may take before their connections are closed. */
  @IsIntegerBetween(0, 600_000)
  readonly SHUTDOWN_GRACE_MS: number = 10_000;
}

/** The allowed CORS origins, parsed. */
export function corsOrigins(config: Pick<EnvironmentVariables, 'CORS_ORIGINS'>): string[] {
  return config.CORS_ORIGINS.split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}

/** Whether /docs and /metrics need an admin token (or, for /metrics, METRICS_TOKEN): only in live mode, unless opened by config. */
export function operationalAccess(config: EnvironmentVariables): { docs: 'open' | 'admin'; metrics: 'open' | 'admin' | 'token' } {
  const live = liveMode(config);
  return {
    docs: !live || config.DOCS_PUBLIC ? 'open' : 'admin',
    metrics: !live || config.METRICS_PUBLIC ? 'open' : config.METRICS_TOKEN ? 'token' : 'admin',
  };
}

/**
 * What production (NODE_ENV=production) refuses to start without, each named: a provider (sandbox
 * mode makes up the provider's answers, opens /docs and /metrics, and writes its calls into the
 * audit log), and every key the replicas must share — a key made under a pod's own DATA_DIR would
 * differ from pod to pod (pseudonyms, sessions and the audit chain with it). The service's entry
 * points check it; the stand-alone sandbox, a provider's stand-in, does not.
 */
export function productionProblems(config: EnvironmentVariables): string[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!liveMode(config)) {
    problems.push(
      'UPSTREAM_BASE_URL: required in production (NODE_ENV=production): without it the service runs in sandbox mode, ' +
        'with made-up provider answers, open /docs and /metrics, and sandbox calls in the audit log',
    );
  }
  if (config.AUDIT_SIGNING_KEY === undefined) {
    problems.push(
      "AUDIT_SIGNING_KEY: required in production: the Ed25519 key (PEM, or a file's path) every replica signs audit checkpoints with; " +
        "one made under each pod's DATA_DIR would differ between pods, and their sealers would stop each other",
    );
  }
  if (config.END_USER_PSEUDONYM_KEY === undefined) {
    problems.push(
      "END_USER_PSEUDONYM_KEY: required in production: 32 random bytes (openssl rand -base64 32), or a file's path, " +
        "shared by every replica; one made under each pod's DATA_DIR would give an end user other pseudonyms on other pods",
    );
  }
  return problems;
}
