import { IsOptional, IsString, MinLength } from 'class-validator';
import { IsIntegerBetween } from '../src/config/env.validators';
import { validateEnvironment } from '../src/config/load-config';

/** Development tooling only (dev/): the embedded PostgreSQL, the sandbox, the development OpenID provider. */
export class DevelopmentEnvironment {
  @IsIntegerBetween(0, 65535)
  readonly EMBEDDED_PG_PORT: number = 0;

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

  /** Sandbox mode: where the development OpenID provider listens (on 127.0.0.1); 0 for any free port. */
  @IsIntegerBetween(0, 65535)
  readonly DEV_OIDC_PORT: number = 4011;

  /** Sandbox mode: where the development staff provider (the company's provider's stand-in) listens (on 127.0.0.1); 0 for any free port. */
  @IsIntegerBetween(0, 65535)
  readonly DEV_STAFF_OIDC_PORT: number = 4012;
}

/** Development tooling's settings alone, from `env` (a command the service's checks already passed). */
export function readDevelopmentEnvironment(env: NodeJS.ProcessEnv = process.env): DevelopmentEnvironment {
  // The service's own problems were the command's to name (`sandbox`: production's are not asked again here).
  return validateEnvironment(env, { sandbox: true, also: [DevelopmentEnvironment] });
}
