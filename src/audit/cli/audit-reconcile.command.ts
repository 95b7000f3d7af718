import { parseArgs } from 'node:util';
import { SystemClock } from '../../common/domain/clock.port';
import { DURATION_RULE, formatDuration, parseDuration } from '../../common/domain/duration';
import { SharedCommit } from '../../database/shared-commit';
import { Sql } from '../../database/sql';
import { openDatabase } from '../../database/cli/open-database';
import { checkUnresolvedWindow, DEFAULT_OLDER_THAN_MS, DEFAULT_SINCE_MS, UnresolvedCalls } from '../reconciliation/domain/unresolved-calls.service';
import { UnresolvedCallDto } from '../reconciliation/http/unresolved-calls.dto';
import { AuditEventEntity } from '../trail/persistence/audit-event.entity';
import { PostgresAuditLogRepository } from '../trail/persistence/postgres-audit-log.repository';
import type { CliIo } from '../../database/cli/command-line';

export const RECONCILE_USAGE = `Usage: npm run audit:reconcile -- [--older-than 60s] [--since 30d]

Lists the customer creations and account openings whose outcome at the provider is unknown, with
DATABASE_URL like the other commands: the gateway stopped between sending and the answer
("no_outcome"), or the provider did not answer in time ("unknown"), and no later request with the
same reference succeeded. docs/operations.md says what to do with each.
  --older-than   only calls attempted at least this long ago (default 60s: younger ones may still be running)
  --since        only calls attempted at most this long ago (default 30d)
Durations: 90s, 5m, 2h, 30d (a bare number is seconds).
Prints one JSON line per call, newest first (operation, reference, customer_id, client, client_id,
attempted_at, request_id, state, error_id), and a count on stderr. Exit 0; 2 when called wrongly.`;

function duration(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = parseDuration(value);
  if (ms === undefined) throw new TypeError(`--${name} must be ${DURATION_RULE}`);
  return ms;
}

/** `npm run audit:reconcile`: returns the exit code. */
export async function runAuditReconcile(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let window: { olderThanMs: number; sinceMs: number };
  try {
    const { values } = parseArgs({
      args: argv,
      options: { 'older-than': { type: 'string' }, since: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      io.out(RECONCILE_USAGE);
      return 0;
    }
    window = { olderThanMs: duration('older-than', values['older-than'], DEFAULT_OLDER_THAN_MS), sinceMs: duration('since', values.since, DEFAULT_SINCE_MS) };
    checkUnresolvedWindow(window);
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${RECONCILE_USAGE}`);
    return 2;
  }
  const database = await openDatabase(env, { migrate: false, entities: [AuditEventEntity] });
  try {
    const sql = Sql.of(database.dataSource);
    const log = new PostgresAuditLogRepository(database.dataSource.getRepository(AuditEventEntity), sql, new SharedCommit(sql));
    let count = 0;
    for await (const call of new UnresolvedCalls(log, new SystemClock()).all(window)) {
      io.out(JSON.stringify(UnresolvedCallDto.from(call)));
      count++;
    }
    io.err(
      `${count} call${count === 1 ? '' : 's'} with an unknown outcome, attempted between ${formatDuration(window.sinceMs)} and ${formatDuration(window.olderThanMs)} ago`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
