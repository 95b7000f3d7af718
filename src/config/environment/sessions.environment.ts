import { IsOptional, IsString, Matches, MinLength, ValidateIf } from 'class-validator';
import { IsIntegerBetween, IsReadableBy } from '../env.validators';
import { readClientPrivateKey, readSecretKey, readSecretKeys } from '../end-user-settings';
import { type RawEnvironment } from './raw-environment';

/** Web apps' browser sessions: the gateway's client at the provider, the sessions' key and lifetimes. */
export class SessionEnvironment {
  /**
   * Browser sessions for web apps (docs/security.md, "Web apps"): this service's client at
   * OIDC_ISSUER, a confidential one. Unset in live mode: no browser sessions. Unset in sandbox
   * mode: the development provider's `partner-web`.
   */
  @ValidateIf((env: RawEnvironment) => env.OIDC_CLIENT_ID !== undefined)
  @Matches(/^[\x21-\x7e]{1,200}$/, { message: '$property must be 1-200 visible ASCII characters' })
  readonly OIDC_CLIENT_ID?: string = undefined;

  /** The client's secret (client_secret_basic). Give this or OIDC_CLIENT_PRIVATE_KEY with OIDC_CLIENT_ID. */
  @ValidateIf((env: RawEnvironment) => env.OIDC_CLIENT_SECRET !== undefined || (env.OIDC_CLIENT_ID !== undefined && env.OIDC_CLIENT_PRIVATE_KEY === undefined))
  @IsString({ message: '$property or OIDC_CLIENT_PRIVATE_KEY is required with OIDC_CLIENT_ID' })
  @MinLength(1)
  readonly OIDC_CLIENT_SECRET?: string = undefined;

  /** The client's private key for private_key_jwt (RFC 7523; FAPI 2.0): a private JWK with its `alg` and `kid`, or a file's path. */
  @IsOptional()
  @IsReadableBy(readClientPrivateKey)
  readonly OIDC_CLIENT_PRIVATE_KEY?: string = undefined;

  /**
   * The key the sessions' tokens are sealed with at rest (AES-256-GCM), and staff's sign-in to /docs:
   * 32 bytes, hex or base64, or a file's path. Required with OIDC_CLIENT_ID or STAFF_OIDC_ISSUER in production: a key made under each pod's own
   * DATA_DIR would open only that pod's sessions. Otherwise unset means DATA_DIR/session.key, made
   * at first start. Replicas must share one; a new key ends every session.
   */
  @ValidateIf(
    (env: RawEnvironment) =>
      env.SESSION_KEY !== undefined || (env.NODE_ENV === 'production' && (env.OIDC_CLIENT_ID !== undefined || env.STAFF_OIDC_ISSUER !== undefined)),
  )
  // Checked bottom-up: a missing key is named as missing before a present one is read.
  @IsReadableBy(readSecretKey)
  @IsString({
    message:
      '$property is required with OIDC_CLIENT_ID or STAFF_OIDC_ISSUER in production: 32 random bytes, base64 (openssl rand -base64 32), shared by every replica',
  })
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
}
