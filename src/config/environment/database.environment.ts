import { IsOptional, ValidateIf } from 'class-validator';
import { IsFlag, IsIntegerBetween, IsUrlWithProtocol } from '../env.validators';
import { type RawEnvironment, liveMode } from './raw-environment';

/** PostgreSQL: the service's role, the schema's owner, the pool, the migrations. */
export class DatabaseEnvironment {
  /** Required in live mode: production data does not belong in an embedded database. */
  @ValidateIf((env: RawEnvironment) => liveMode(env) || env.DATABASE_URL !== undefined)
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
}
