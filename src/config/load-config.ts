import { existsSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { EnvironmentVariables, productionProblems } from './env.schema';

export type AppConfig = EnvironmentVariables;

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

/** The names of every variable the schema knows, in declaration order. */
export function knownVariables(): string[] {
  return Object.keys(new EnvironmentVariables());
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
export interface EnvironmentChecks {
  readonly sandbox?: boolean;
  readonly live?: boolean;
}

export function validateEnvironment(env: Record<string, string | undefined>, { sandbox = false, live = false }: EnvironmentChecks = {}): AppConfig {
  const raw: Record<string, string> = {};
  for (const key of knownVariables()) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') raw[key] = value;
  }
  const config = plainToInstance(EnvironmentVariables, raw);
  const errors = validateSync(config, { skipMissingProperties: false, stopAtFirstError: true });
  // Production's own refusals (productionProblems) come with the rest, so one pass fixes all; the
  // stand-alone sandbox, a provider's stand-in, is not the service.
  const found = [...errors.map(describe), ...(sandbox ? [] : productionProblems(config))];
  // A variable production already named missing is named once.
  const problems = [...found, ...(live ? liveProblems(config).filter((problem) => !found.some((other) => other.startsWith(problem.split(':')[0] + ':'))) : [])];
  if (problems.length > 0) throw new ConfigurationError(problems);
  return config;
}

/** What the service's own entry point needs that development's (`npm start`) starts itself. */
function liveProblems(config: AppConfig): string[] {
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
export function readConfigOrExit(options: EnvironmentChecks = {}): AppConfig {
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
