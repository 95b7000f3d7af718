import { accessSync, constants, createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Sql } from '../../database/sql';
import { openDatabase } from '../../database/cli/open-database';
import { SignedCheckpoint } from '../seal/domain/audit-seal';
import { AuditVerifier, ExternalCount, UnreadableCheckpoint } from '../seal/domain/audit-verifier';
import { PostgresAuditSealRepository } from '../seal/persistence/postgres-audit-seal.repository';
import { loadTrustedKeys } from '../seal/signing/audit-signing-keys';

export interface VerifyIo {
  out(line: string): void;
  err(line: string): void;
}

export const VERIFY_USAGE = `Usage: npm run audit:verify -- [--from ISO-8601] [--to ISO-8601] [--checkpoints FILE]

Recomputes the audit log against its signed checkpoints, with DATABASE_URL like the other commands.
  --from, --to      only the checkpoints whose events fall in [from, to)
  --checkpoints     the service's log (or any file of its "audit_checkpoint" lines) kept outside
                    the database: each checkpoint in it must be in the database, unchanged, or purged
Prints one JSON line per finding (the first 1,000), then a summary line with their number and, with
--checkpoints, how many checkpoints the file held, how many verified and were compared, and how many
were ignored. Events waiting to be sealed longer than AUDIT_SEAL_MAX_LAG_SECONDS are a finding.
Exit 0: intact. Exit 1: findings, or --checkpoints held no checkpoint that verified. Exit 2: usage.`;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!ISO_8601.test(value) || Number.isNaN(date.getTime()))
    throw new TypeError(`--${name} must be an ISO 8601 date or date-time, such as 2026-11-01T00:00:00Z`);
  return date;
}

/** The escape sequences a terminal's colours are (a human-readable log line is coloured). */
const TERMINAL_COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * A log line as JSON: a JSON line as the service writes it when its output is not a terminal, or
 * the JSON a human-readable (terminal) line ends with, after its time, level and message.
 */
function jsonOf(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    const plain = line.replace(TERMINAL_COLOURS, '');
    const start = plain.indexOf('{"');
    if (start < 0) return undefined;
    try {
      return JSON.parse(plain.slice(start));
    } catch {
      return undefined;
    }
  }
}

/**
 * Checkpoints from log lines: any line that names `audit_checkpoint` is one, yielded as the
 * checkpoint it holds, or as what made it unreadable (not JSON, cut short or changed): such a
 * line is counted, never passed over in silence. Other lines are not checkpoints. Whatever a line
 * holds counts only once its signature verifies with a trusted key.
 */
async function* checkpointsIn(file: string): AsyncIterable<SignedCheckpoint | UnreadableCheckpoint> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (!line.includes('"audit_checkpoint"')) continue;
    const parsed = jsonOf(line) as
      { audit_checkpoint?: { seq?: unknown; statement?: unknown; head?: unknown; key_id?: unknown; ed25519_signature?: unknown } } | undefined;
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
      yield { unreadable: 'not_json' };
      continue;
    }
    const c = parsed.audit_checkpoint;
    if (
      c &&
      typeof c.seq === 'number' &&
      typeof c.statement === 'string' &&
      typeof c.head === 'string' &&
      typeof c.key_id === 'string' &&
      typeof c.ed25519_signature === 'string'
    ) {
      yield { seq: c.seq, statement: c.statement, head: c.head, keyId: c.key_id, signature: c.ed25519_signature };
    } else {
      yield { unreadable: 'incomplete' };
    }
  }
}

/** Why none of the copy's checkpoints could be compared, cause by cause. */
function whyNoneCompared(file: string, count: ExternalCount): string {
  if (count.read === 0) {
    return `--checkpoints ${file}: no line in it names a checkpoint. Point --checkpoints at the service's log, where each checkpoint is a line with "audit_checkpoint".`;
  }
  const causes = [
    count.not_json > 0 &&
      `${count.not_json} not readable as JSON (cut short, or wrapped by something other than the service's JSON lines or its human-readable lines)`,
    count.incomplete > 0 && `${count.incomplete} without every field of a checkpoint (cut short, or changed)`,
    count.unverified > 0 &&
      `${count.unverified} whose signature no trusted key verifies (AUDIT_SIGNING_KEY's, or one of AUDIT_PUBLIC_KEYS), or whose head is not its statement's`,
  ].filter(Boolean);
  return `--checkpoints ${file}: none of its ${count.read} checkpoint lines could be compared: ${causes.join('; ')}. The database was checked against itself only.`;
}

/** `npm run audit:verify`: returns the exit code. */
export async function runAuditVerify(argv: string[], env: NodeJS.ProcessEnv, io: VerifyIo): Promise<number> {
  let options: { from?: Date; to?: Date; checkpoints?: string };
  try {
    const { values } = parseArgs({
      args: argv,
      options: { from: { type: 'string' }, to: { type: 'string' }, checkpoints: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      io.out(VERIFY_USAGE);
      return 0;
    }
    options = { from: instant('from', values.from), to: instant('to', values.to), checkpoints: values.checkpoints };
    if (options.from && options.to && options.from >= options.to) throw new TypeError('--from must be before --to');
    if (options.checkpoints !== undefined) {
      try {
        accessSync(options.checkpoints, constants.R_OK);
      } catch {
        throw new TypeError(`--checkpoints ${options.checkpoints}: no such readable file`);
      }
    }
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${VERIFY_USAGE}`);
    return 2;
  }
  const database = await openDatabase(env, { migrate: false });
  try {
    const keys = loadTrustedKeys(database.config);
    if (keys.keyIds.length === 0) {
      io.err('No key to verify with: set AUDIT_SIGNING_KEY (or AUDIT_PUBLIC_KEYS), or run where DATA_DIR holds the signing key');
      return 2;
    }
    const started = process.hrtime.bigint();
    const report = await new AuditVerifier(new PostgresAuditSealRepository(Sql.of(database.dataSource)), keys).verify({
      from: options.from,
      to: options.to,
      external: options.checkpoints ? checkpointsIn(options.checkpoints) : undefined,
      maxUnsealed: { seconds: database.config.AUDIT_SEAL_MAX_LAG_SECONDS, now: new Date() },
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // A copy asked for and none verified: nothing outside the database vouched for it.
    const notCompared = report.external !== undefined && report.external.verified === 0;
    for (const finding of report.findings) io.out(JSON.stringify({ finding }));
    io.out(
      JSON.stringify({
        status: !report.intact ? 'tampered' : notCompared ? 'not_compared' : 'intact',
        events: report.events,
        checkpoints: report.checkpoints,
        findings: report.findingCount,
        newest_checkpoint: report.newest ?? null,
        unsealed: { events: report.unsealed.count, oldest: report.unsealed.oldest?.toISOString() ?? null },
        ...(report.external ? { external_checkpoints: report.external } : {}),
        seconds: Math.round(seconds * 1000) / 1000,
        ...(options.from || options.to ? { window: { from: options.from?.toISOString() ?? null, to: options.to?.toISOString() ?? null } } : {}),
      }),
    );
    if (notCompared) io.err(whyNoneCompared(options.checkpoints!, report.external));
    return report.intact && !notCompared ? 0 : 1;
  } finally {
    await database.close();
  }
}
