import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
  ValidationOptions,
} from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Accepts true/false/1/0/yes/no; anything else is left as is so that @IsBoolean names it. */
function toBoolean({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string') return value;
  const normalised = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalised)) return true;
  if (['false', '0', 'no', 'off'].includes(normalised)) return false;
  return value;
}

/** Integers only: "12abc" or "1.5" stay strings and fail @IsInt instead of being half-parsed. */
function toInteger({ value }: { value: unknown }): unknown {
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return value;
}

function IsUrlWithProtocol(protocols: string[], options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isUrlWithProtocol',
      target: target.constructor,
      propertyName,
      options: {
        message: `$property must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string') return false;
          try {
            return protocols.includes(new URL(value).protocol);
          } catch {
            return false;
          }
        },
      },
    });
}

/**
 * Every environment variable the service reads, with its default. `.env.example` mirrors this
 * class; a test keeps the two in step.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  readonly NODE_ENV: string = 'development';

  @Transform(toInteger)
  @IsInt()
  @Min(0)
  @Max(65535)
  readonly PORT: number = 3000;

  @IsString()
  @MinLength(1)
  readonly HOST: string = '127.0.0.1';

  @IsIn(LOG_LEVELS)
  readonly LOG_LEVEL: LogLevel = 'info';

  @IsOptional()
  @IsUrlWithProtocol(['postgres:', 'postgresql:'])
  readonly DATABASE_URL?: string = undefined;

  @Transform(toInteger)
  @IsInt()
  @Min(1)
  @Max(200)
  readonly DATABASE_POOL_SIZE: number = 10;

  @Transform(toBoolean)
  @IsBoolean()
  readonly MIGRATIONS_RUN: boolean = true;

  @IsString()
  @MinLength(1)
  readonly DATA_DIR: string = './.data';

  @Transform(toInteger)
  @IsInt()
  @Min(0)
  @Max(65535)
  readonly EMBEDDED_PG_PORT: number = 0;

  @IsOptional()
  @IsUrlWithProtocol(['http:', 'https:'])
  readonly UPSTREAM_BASE_URL?: string = undefined;

  @Transform(toBoolean)
  @IsBoolean()
  readonly DOCS_ENABLED: boolean = true;

  @Transform(toBoolean)
  @IsBoolean()
  readonly TRUST_PROXY: boolean = false;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  readonly DEFAULT_TENANT: string = 'default';
}
