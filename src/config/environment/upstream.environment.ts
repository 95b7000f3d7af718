import { IsIn, IsOptional, IsString, Matches, MinLength, ValidateIf } from 'class-validator';
import { IsIntegerBetween, IsUpstreamPublicKey, IsUrlWithProtocol } from '../env.validators';
import { liveMode } from './raw-environment';

/** The provider: where, with what credentials and key, and how patiently it is called. */
export class UpstreamEnvironment {
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
}
