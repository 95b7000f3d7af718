import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { IsFlag, IsIntegerBetween, IsReadableBy } from '../env.validators';
import { readTrustedProxies } from '../trusted-proxies';
import { readSecretKey, readSecretKeys } from '../end-user-settings';
import { PROCESS_ROLES, type ProcessRole } from '../../common/domain/background-work';
import { type RawEnvironment, liveMode, LOG_LEVELS, type LogLevel } from './raw-environment';

/** The process and its edge: where it listens, how it logs, what a request may be, who may call from a browser, how it stops. */
export class ServiceEnvironment {
  @IsIn(['development', 'production', 'test'])
  readonly NODE_ENV: string = 'development';

  @IsIntegerBetween(0, 65535)
  readonly PORT: number = 3000;

  @IsString()
  @MinLength(1)
  readonly HOST: string = '127.0.0.1';

  @IsIn(LOG_LEVELS)
  readonly LOG_LEVEL: LogLevel = 'info';

  @IsString()
  @MinLength(1)
  readonly DATA_DIR: string = './.data';

  /**
   * The key partners' data is sealed with at rest (AES-256-GCM): bank accounts' identifiers and
   * the answers the idempotency store keeps to replay. 32 bytes, hex or base64, or a file's path.
   * Required in production; elsewhere unset means DATA_DIR/data.key, made at first start. Replicas
   * must share one. Rotated as SESSION_KEY is: the old key moves to DATA_PREVIOUS_KEYS.
   */
  @IsOptional()
  @IsReadableBy(readSecretKey)
  readonly DATA_KEY?: string = undefined;

  /** Keys DATA_KEY replaced, comma-separated: what was sealed under them still opens (docs/operations.md, "Rotating credentials"). */
  @IsOptional()
  @IsReadableBy(readSecretKeys)
  readonly DATA_PREVIOUS_KEYS?: string = undefined;

  /**
   * Whether webhook endpoints may be plain http and reach private, loopback or link-local addresses
   * (a development receiver on localhost). Unset: yes, except in production, which refuses it set.
   */
  @IsOptional()
  @IsFlag()
  readonly WEBHOOK_LOCAL_URLS?: boolean = undefined;

  /**
   * What this process runs: `all` (the API and the background work, the default), `api` (the API
   * alone: API replicas beside a worker), `worker` (the background work alone; `node dist/src/worker.js` sets it).
   */
  @IsIn(PROCESS_ROLES)
  readonly PROCESS_ROLE: ProcessRole = 'all';

  /** Whether this process delivers webhooks (the job engine shares the work between the processes that do). */
  @IsFlag()
  readonly WEBHOOK_DELIVERY: boolean = true;

  /**
   * How long a delivering process may go without its heartbeat (every fifth of this) before it is
   * taken for dead and the attempts it held are handed to another process.
   */
  @IsIntegerBetween(3_000, 600_000)
  readonly WEBHOOK_WORKER_LOST_AFTER_MS: number = 60_000;

  /** How many deliveries one process attempts at once. */
  @IsIntegerBetween(1, 100)
  readonly WEBHOOK_CONCURRENCY: number = 10;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  readonly DEFAULT_TENANT: string = 'default';

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

  /**
   * The proxies in front that are believed about a request's origin (X-Forwarded-For, -Host,
   * -Proto): their addresses or CIDR ranges, comma-separated, or their number; false or 0: none.
   * `true` trusts every hop, so that a caller chooses its own address: refused in production.
   */
  @IsReadableBy(readTrustedProxies)
  readonly TRUST_PROXY: string = 'false';

  /** Browser origins allowed to call the API, comma-separated; empty: no cross-origin access. */
  @Matches(/^\s*(https?:\/\/[^\s,/]+\s*(,\s*https?:\/\/[^\s,/]+\s*)*)?$/, {
    message: '$property must be a comma-separated list of origins such as https://app.example.com',
  })
  readonly CORS_ORIGINS: string = '';

  /**
   * The origin browsers reach this service at (https://api.partner.example): a web app's login
   * comes back to `<PUBLIC_BASE_URL>/api/v1/session/callback`, its session cookie belongs to this
   * host, and requests with the cookie must come from it or from CORS_ORIGINS. Required with
   * OIDC_CLIENT_ID in production; otherwise it defaults to http://127.0.0.1:<the port listened on>.
   */
  @ValidateIf(
    (env: RawEnvironment) => env.PUBLIC_BASE_URL !== undefined || (liveMode(env) && env.NODE_ENV === 'production' && env.OIDC_CLIENT_ID !== undefined),
  )
  @Matches(/^https?:\/\/[^\s/?#]+$/, {
    message: '$property must be an origin such as https://api.partner.example (required with OIDC_CLIENT_ID in production)',
  })
  readonly PUBLIC_BASE_URL?: string = undefined;

  /**
   * Where partners read the error catalogue, when it is published elsewhere than on the gateway:
   * each error's `doc_url` (in the envelope and the request log) is `<ERROR_DOCS_URL>#<anchor>`.
   * Unset, it is the gateway's own page, `<PUBLIC_BASE_URL or the request's origin>/reference/errors`.
   */
  @ValidateIf((env: RawEnvironment) => env.ERROR_DOCS_URL !== undefined)
  @Matches(/^https?:\/\/[^\s#?]{1,500}$/, { message: '$property must be an absolute http(s) URL without spaces, # or ?' })
  readonly ERROR_DOCS_URL?: string = undefined;

  @IsFlag()
  readonly DOCS_ENABLED: boolean = true;

  /** Live mode: /docs and /docs-json without an admin token. Sandbox mode always serves them openly. */
  @IsFlag()
  readonly DOCS_PUBLIC: boolean = false;

  /** On SIGTERM/SIGINT: how long in-flight requests may take before their connections are closed. */
  @IsIntegerBetween(0, 600_000)
  readonly SHUTDOWN_GRACE_MS: number = 10_000;
}
