import { IsOptional } from 'class-validator';
import { IsIntegerBetween, IsUrlWithProtocol } from '../env.validators';

/** The rate limits, and where their counters live. */
export class RateLimitEnvironment {
  /** Requests per minute per client token; over it, 429 with Retry-After. */
  @IsIntegerBetween(1, 1_000_000)
  readonly RATE_LIMIT_PER_MINUTE: number = 600;

  /** Requests per minute per source IP for calls without a valid client token. */
  @IsIntegerBetween(1, 1_000_000)
  readonly RATE_LIMIT_PER_IP_PER_MINUTE: number = 60;

  /**
   * Reads of a partner's request log (GET /api/v1/requests and one request's timeline) per minute
   * per caller, counted apart from and on top of RATE_LIMIT_PER_MINUTE: each is a query of the audit log.
   */
  @IsIntegerBetween(1, 1_000_000)
  readonly RATE_LIMIT_REQUEST_LOG_PER_MINUTE: number = 60;

  /** Shared rate-limit counters for several replicas; unset, each replica counts in memory. */
  @IsOptional()
  @IsUrlWithProtocol(['redis:', 'rediss:'])
  readonly RATE_LIMIT_REDIS_URL?: string = undefined;
}
