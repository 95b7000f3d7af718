import { existsSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { productionProblems } from './env.schema';
import { AuditEnvironment } from './environment/audit.environment';
import { DatabaseEnvironment } from './environment/database.environment';
import { EndUserEnvironment } from './environment/end-users.environment';
import { IdempotencyEnvironment } from './environment/idempotency.environment';
import { MetricsEnvironment } from './environment/metrics.environment';
import { RateLimitEnvironment } from './environment/rate-limit.environment';
import { ServiceEnvironment } from './environment/service.environment';
import { SessionEnvironment } from './environment/sessions.environment';
import { StaffEnvironment } from './environment/staff.environment';
import { UpstreamEnvironment } from './environment/upstream.environment';

/**
 * The service's settings, one class per feature (environment/): each feature is handed its own
 * (`ConfigService<UpstreamEnvironment>`, say) and reads nothing else; the composition root and the
 * entry points hold the whole.
 */
export const SERVICE_ENVIRONMENT = [
  ServiceEnvironment,
  DatabaseEnvironment,
  UpstreamEnvironment,
  AuditEnvironment,
  IdempotencyEnvironment,
  RateLimitEnvironment,
  MetricsEnvironment,
  EndUserEnvironment,
  SessionEnvironment,
  StaffEnvironment,
] as const;

export type GatewaySettings = ServiceEnvironment &
  DatabaseEnvironment &
  UpstreamEnvironment &
  AuditEnvironment &
  IdempotencyEnvironment &
  RateLimitEnvironment &
  MetricsEnvironment &
  EndUserEnvironment &
  SessionEnvironment &
  StaffEnvironment;

/** A feature's settings class: every variable a field with its default, validated by its decorators. */
export type EnvironmentClass<T extends object = object> = new () => T;

export class ConfigurationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` + problems.map((p) => `  - ${p}`).join('\n'));
    this.name = 'ConfigurationError';
  }
}

function describe(error: ValidationError): string {
  // Values are never echoed: a variable may hold a credential.
  const reasons = Object.values(error.constraints ?? {}).join('; ');
  return `${error.property}: ${reasons}`;
}

/** The names of every variable the service's settings know (and `also`'s: development tooling's), in declaration order. */
export function knownVariables(also: readonly EnvironmentClass[] = []): string[] {
  return [...SERVICE_ENVIRONMENT, ...also].flatMap((settings) => Object.keys(new settings()));
}

/**
 * Validates the environment once and returns the typed configuration. Empty strings count as
 * unset. Every bad variable is named in one error, so a broken deployment is fixed in one pass.
 */
/**
 * `sandbox`: for the stand-alone sandbox, a provider's stand-in, which is not the service.
 * `live`: for the service's own entry point (src/main.ts), which has no sandbox and no embedded
 * database to fall back on: the provider and the database must be named.
 */
export interface EnvironmentChecks<Also extends object = object> {
  readonly sandbox?: boolean;
  readonly live?: boolean;
  /** Settings beyond the service's, validated with them: development tooling's (dev/development.environment.ts). */
  readonly also?: readonly EnvironmentClass<Also>[];
}

export function validateEnvironment<Also extends object = object>(
  env: Record<string, string | undefined>,
  { sandbox = false, live = false, also = [] }: EnvironmentChecks<Also> = {},
): GatewaySettings & Also {
  const raw: Record<string, string> = {};
  for (const key of knownVariables(also)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') raw[key] = value;
  }
  // Each feature's class from the same variables (a condition may read another feature's), its
  // own fields taken into the whole; every class's problems are named together.
  const errors: ValidationError[] = [];
  const whole: Record<string, unknown> = {};
  for (const settings of [...SERVICE_ENVIRONMENT, ...also] as readonly EnvironmentClass[]) {
    const instance = plainToInstance(settings, raw) as Record<string, unknown>;
    errors.push(...validateSync(instance, { skipMissingProperties: false, stopAtFirstError: true }));
    for (const key of Object.keys(new settings())) whole[key] = instance[key];
  }
  const config = whole as GatewaySettings & Also;
  // Production's own refusals (productionProblems) come with the rest, so one pass fixes all; the
  // stand-alone sandbox, a provider's stand-in, is not the service.
  const found = [...errors.map(describe), ...(sandbox ? [] : productionProblems(config))];
  // A variable production already named missing is named once.
  const problems = [...found, ...(live ? liveProblems(config).filter((problem) => !found.some((other) => other.startsWith(problem.split(':')[0] + ':'))) : [])];
  if (problems.length > 0) throw new ConfigurationError(problems);
  return config;
}

/** What the service's own entry point needs that development's (`npm start`) starts itself. */
function liveProblems(config: GatewaySettings): string[] {
  const problems: string[] = [];
  if (!config.UPSTREAM_BASE_URL) {
    problems.push('UPSTREAM_BASE_URL: required by the service, which calls a real provider (the sandbox is development tooling: npm start, in a checkout)');
  }
  if (!config.DATABASE_URL) {
    problems.push(
      'DATABASE_URL: required by the service, which uses an external PostgreSQL (the embedded one is development tooling: npm start, in a checkout)',
    );
  }
  return problems;
}

/** Reads `.env` from the working directory when present; real environment variables win. */
export function loadEnvFile(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/**
 * For entry points (the service, the sandbox): `.env`, then the environment, validated; on a bad
 * configuration, the one message naming every problem on stderr and exit 1.
 */
export function readConfigOrExit<Also extends object = object>(options: EnvironmentChecks<Also> = {}): GatewaySettings & Also {
  loadEnvFile();
  try {
    return validateEnvironment(process.env, options);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      process.stderr.write(`${error.message}\nSee .env.example for every variable and its default.\n`);
      process.exit(1);
    }
    throw error;
  }
}
