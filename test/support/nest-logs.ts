import { Logger } from '@nestjs/common';

/** One line the code logged through Nest's Logger: its level, its context (the logger's name), its message and fields. */
export interface LoggedLine {
  readonly level: 'error' | 'warn' | 'log';
  readonly context: string | undefined;
  readonly message: string | undefined;
  readonly fields: Record<string, unknown> | undefined;
}

/**
 * Holds what the code under test logs through Nest's Logger (`this.logger.warn({ … }, 'message')`),
 * from `beforeEach` to `afterEach`, instead of letting it reach the run's output: a test that
 * provokes a failure asserts the line an operator would read, and a green run prints no error it
 * expected. Call it at a describe's top.
 */
export function nestLogsOfEachTest(): { readonly lines: LoggedLine[] } {
  const held = { lines: [] as LoggedLine[] };
  const originals = { error: Logger.prototype.error, warn: Logger.prototype.warn, log: Logger.prototype.log };
  beforeEach(() => {
    held.lines = [];
    for (const level of ['error', 'warn', 'log'] as const) {
      Logger.prototype[level] = function (this: Logger, ...args: unknown[]) {
        const [first, second] = args;
        const fields = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : undefined;
        const message = typeof first === 'string' ? first : typeof second === 'string' ? second : undefined;
        held.lines.push({ level, context: (this as unknown as { context?: string }).context, message, fields });
      };
    }
  });
  afterEach(() => {
    Object.assign(Logger.prototype, originals);
  });
  return held;
}
