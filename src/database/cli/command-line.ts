import type { DataSourceOptions } from 'typeorm';
import { DomainError } from '../../common/domain/domain-error';
import { GatewaySettings, ConfigurationError } from '../../config/load-config';
import { openDatabase, setUpCommandLineProcess } from './open-database';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** A mistake in how the command was called: printed with the usage, exit 2. */
export class UsageError extends Error {}

export type Command = (
  args: string[],
  context: { readonly database: Awaited<ReturnType<typeof openDatabase>>; readonly config: GatewaySettings; readonly io: CliIo },
) => Promise<number>;

/**
 * One command-line tool over the database: help, the database opened (migrated) and closed, usage
 * mistakes exit 2 with the usage, refusals (domain and configuration errors) exit 1 with their
 * message. Returns the exit code; process handling stays in the entry point, so tests call this.
 */
export async function runCommandLine(
  tool: { readonly usage: string; readonly commands: Readonly<Record<string, Command>>; readonly entities: DataSourceOptions['entities'] },
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<number> {
  const [name = '', ...args] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    io.out(tool.usage);
    return 0;
  }
  const command = Object.hasOwn(tool.commands, name) ? tool.commands[name] : undefined;
  if (!command) {
    io.err(`${name ? `Unknown command '${name}'` : 'A command is required'}\n\n${tool.usage}`);
    return 2;
  }
  let database;
  try {
    database = await openDatabase(env, { migrate: true, entities: tool.entities });
    return await command(args, { database, config: database.config, io });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      io.err(`${(error as Error).message}\n\n${tool.usage}`);
      return 2;
    }
    if (error instanceof DomainError || error instanceof ConfigurationError) {
      io.err(error.message);
      return 1;
    }
    throw error;
  } finally {
    await database?.close();
  }
}

/** An entry point's whole job: run the tool on this process's arguments, and exit with its code. */
export function runAsProcess(tool: string, run: (argv: string[], env: NodeJS.ProcessEnv, io: CliIo) => Promise<number>): void {
  setUpCommandLineProcess();
  run(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${tool}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
