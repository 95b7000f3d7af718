import { IsIntegerBetween } from '../env.validators';

/** Replays of a reference's result. */
export class IdempotencyEnvironment {
  /** How long a reference's result is kept for replay. */
  @IsIntegerBetween(1, 24 * 30)
  readonly IDEMPOTENCY_TTL_HOURS: number = 24;
}
