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

  /** Shared rate-limit counters for several replicas; unset, each replica counts in memory. */
  @IsOptional()
  @IsUrlWithProtocol(['redis:', 'rediss:'])
  readonly RATE_LIMIT_REDIS_URL?: string = undefined;
}
