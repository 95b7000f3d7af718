import { positionTimeSql } from '../../../common/domain/list-cursor';
import { Injectable } from '@nestjs/common';
import { SPAN_ATTRIBUTES, traced } from '../../../common/telemetry/tracing';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { GroupCommit } from '../../../database/group-commit';
import { SharedCommit } from '../../../database/shared-commit';
import { Sql } from '../../../database/sql';
import { isRefusedData, unavailableOnOutage } from '../../../database/store-errors';
import { AuditEvent } from '../domain/audit-event';
import { AuditLog, CommittedEvent, StoreWrite } from '../domain/audit-log.port';
import { isAuditQuery } from '../../persistence/audit-query-key.sql';
import { RECEIPT_COLUMNS, ReceiptRow, toCommittedEvent } from '../../seal/persistence/event-hash.sql';
import { UnresolvedCall, UnresolvedPage, UnresolvedQuery } from '../domain/unresolved-call';
import { AuditEventEntity, AuditEventRow } from './audit-event.entity';
import { AuditEventMapper } from './audit-event.mapper';

/** occurred_at to the microsecond, so a page boundary never skips or repeats an event. */
export const POSITION_SQL = positionTimeSql('e.occurred_at');

/**
 * Attempts (newest first, on the phase index) whose own request ended neither `rejected` nor
 * `failed`, and whose reference never succeeded. The look-ups go through the reference index: an
 * attempt's terminal event carries the same reference, and a reference has a handful of events
 * besides the searches of the audit log about it, which they skip (isAuditQuery).
 */
const UNRESOLVED_SQL = `
  SELECT e.id, ${POSITION_SQL} AS position, e.occurred_at, e.operation, e.reference, e.customer_id, e.client_id, e.client_name, e.request_id,
         u.error_id AS unknown_error_id, u.id IS NOT NULL AS ended_unknown
  FROM audit_events e
  LEFT JOIN LATERAL (
    SELECT t.id, t.error_id FROM audit_events t
    WHERE t.reference = e.reference AND ${isAuditQuery('t')} IS FALSE AND t.request_id = e.request_id AND t.phase = 'unknown'
    LIMIT 1
  ) u ON true
  WHERE e.phase = 'attempted' AND e.reference IS NOT NULL
    AND e.occurred_at < $1
    AND ($2::timestamptz IS NULL OR e.occurred_at >= $2)
    AND ($3::uuid IS NULL OR (e.reference = $3 AND ${isAuditQuery()} IS FALSE))
    AND ($4::varchar IS NULL OR e.request_id <> $4)
    AND ($5::timestamptz IS NULL OR (e.occurred_at, e.id) < ($5::timestamptz, $6::uuid))
    AND NOT EXISTS (
      SELECT 1 FROM audit_events t
      WHERE t.reference = e.reference AND ${isAuditQuery('t')} IS FALSE AND t.request_id = e.request_id AND t.phase IN ('rejected', 'failed'))
    AND NOT EXISTS (SELECT 1 FROM audit_events s WHERE s.reference = e.reference AND ${isAuditQuery('s')} IS FALSE AND s.operation = e.operation AND s.phase = 'succeeded')
  ORDER BY e.occurred_at DESC, e.id DESC
  LIMIT $7`;

/** A row of another store's write, with the event that rides with it (appendAlong). */
interface AlongRow {
  readonly event: AuditEventRow;
  readonly values: readonly unknown[];
  readonly key: string;
}

/** What a statement that carried events answers for each of its rows. */
interface AlongResult {
  readonly written: boolean;
  readonly committed?: CommittedEvent;
}

interface UnresolvedRow {
  id: string;
  position: string;
  occurred_at: Date;
  operation: UnresolvedCall['operation'];
  reference: string;
  customer_id: string | null;
  client_id: string | null;
  client_name: string | null;
  request_id: string;
  unknown_error_id: string | null;
  ended_unknown: boolean;
}

@Injectable()
export class PostgresAuditLogRepository extends AuditLog {
  /**
   * Events written at the same moment by concurrent requests share one INSERT and one commit, with
   * the other stores' rows of that moment (a DPoP proof's use: SharedCommit); each request still
   * waits for its own event to be committed.
   */
  private readonly inserts: (row: AuditEventRow) => Promise<void>;

  /**
   * One statement for any number of events: the events arrive as one JSON parameter, an array of
   * the rows, and json_to_recordset reads each row's fields by name as the columns' own types.
   * Built from the entity, so a column added there is written here too. `along(write)` is the same
   * INSERT after another write, taking only the events whose row that write returned (see
   * appendAlong). One JSON text costs the service a fraction of what one array per column did:
   * pg escaped every element of every array on each batch (docs/benchmarks.md).
   */
  private readonly insert: {
    sql: string;
    shared: (parameter: string) => string;
    along: (write: string, fields: number) => string;
    with: (write: string, fields: number) => string;
  };

  /**
   * The group commit of each statement appendAlong or appendWith has carried, by how and by the
   * statement (the service has three: the idempotency claim, its result, its release).
   */
  private readonly along = new Map<string, GroupCommit<AlongRow, AlongResult>>();

  constructor(
    @InjectRepository(AuditEventEntity) rows: Repository<AuditEventEntity>,
    private readonly sql: Sql,
    shared: SharedCommit,
  ) {
    super();
    // Not `tx`: the database sets it to the writing transaction (the seal order).
    const columns = rows.metadata.columns.filter((column) => column.isInsert);
    // The key an event rides with is a field of its JSON object (along): no column may take its name.
    if (columns.some((column) => column.propertyName === 'alongKey'))
      throw new Error('audit_events has a column named alongKey, the name appendAlong gives its key');
    const names = columns.map((column) => `"${column.databaseName}"`).join(', ');
    const fields = columns.map((column) => `"${column.propertyName}"`).join(', ');
    const record = columns.map((column) => `"${column.propertyName}" ${String(column.type)}`).join(', ');
    const rowsOf = (parameter: string, extra = '') => `json_to_recordset(${parameter}::json) AS j(${record}${extra})`;
    this.insert = {
      sql: `INSERT INTO audit_events (${names}) SELECT ${fields} FROM ${rowsOf('$1')}`,
      // The same, as one of a shared statement's WITH queries, reading its rows from that statement's `parameter`.
      shared: (parameter) => `audit_inserted AS (INSERT INTO audit_events (${names}) SELECT ${fields} FROM ${rowsOf(parameter)})`,
      // Data-modifying WITH queries all run, on one snapshot, in the statement's one transaction;
      // the INSERT reads the write's RETURNING, so an event goes in only with its row.
      along: (write, values) =>
        `WITH written AS (${write}), appended AS (` +
        `INSERT INTO audit_events (${names}) SELECT ${fields} FROM ${rowsOf(`$${values + 1}`, ', "alongKey" text')} ` +
        `WHERE j."alongKey" IN (SELECT key::text FROM written)) SELECT key::text AS key FROM written`,
      // The same, every event written whatever the write found; each event also answers as committed
      // (its stored columns and its hash as the seal computes it: what its receipt names), in the same statement.
      with: (write, values) =>
        `WITH written AS (${write}), appended AS (INSERT INTO audit_events AS e (${names}) SELECT ${fields} FROM ${rowsOf(`$${values + 1}`)} ` +
        `RETURNING ${RECEIPT_COLUMNS}) SELECT key::text AS key, NULL AS committed FROM written UNION ALL SELECT NULL, row_to_json(a)::text FROM appended a`,
    };
    const insert = this.insert;
    const oneRow = columns.map((column) => ({ property: column.propertyName as keyof AuditEventRow, write: asJsonWrites(String(column.type)) }));
    // Prepared, as the statements events ride with are: its text is the same whatever the batch's size, and parsing and planning it for every batch cost PostgreSQL more than the rows (docs/benchmarks.md).
    this.inserts = shared.writerOf<AuditEventRow, void>({
      name: 'audit',
      sql: (parameter) => ({ with: [insert.shared(parameter)] }),
      alone: () => insert.sql,
      one: {
        sql: `INSERT INTO audit_events (${names}) VALUES (${columns.map((column, index) => `$${index + 1}::${String(column.type)}`).join(', ')})`,
        values: (event) => oneRow.map(({ property, write }) => write(event[property])),
      },
      json: (events) => jsonOf(events),
      results: (events) => events.map(() => undefined),
    });
  }

  append(event: AuditEvent): Promise<void> {
    return traced('audit.write', { [SPAN_ATTRIBUTES.operation]: event.operation, 'gateway.audit_phase': event.phase }, () =>
      this.inserts(AuditEventMapper.toRow(event)),
    );
  }

  /**
   * Rows that arrive together are written together, as events are (GroupCommit): one statement,
   * one commit, at most one row per key in each.
   */
  async appendAlong(event: AuditEvent, write: StoreWrite): Promise<boolean> {
    return (await this.rideWith('along', event, write)).written;
  }

  appendWith(event: AuditEvent, write: StoreWrite): Promise<AlongResult> {
    return this.rideWith('with', event, write);
  }

  private rideWith(how: 'along' | 'with', event: AuditEvent, write: StoreWrite): Promise<AlongResult> {
    const commits = this.alongOf(how, write);
    const row: AlongRow = { event: AuditEventMapper.toRow(event), values: write.values, key: write.key };
    return traced('audit.write', { [SPAN_ATTRIBUTES.operation]: event.operation, 'gateway.audit_phase': event.phase }, () =>
      unavailableOnOutage(() => commits.write(row)),
    );
  }

  private alongOf(how: 'along' | 'with', write: StoreWrite): GroupCommit<AlongRow, AlongResult> {
    const id = `${how}:${write.sql}`;
    let commits = this.along.get(id);
    if (commits === undefined) {
      const name = `audit-${how}-${this.along.size + 1}`;
      const text = this.insert[how](write.sql, write.values.length);
      const keyed = how === 'along';
      commits = new GroupCommit<AlongRow, AlongResult>((rows) => this.writeAlong(name, text, rows, keyed), {
        maxBatch: 200,
        maxInFlight: 2,
        isRowError: isRefusedData,
        keyOf: (row) => row.key,
      });
      this.along.set(id, commits);
    }
    return commits;
  }

  /** In the order of their keys: two statements that lock the same rows (two replicas') lock them in one order, so neither waits on the other in a cycle. */
  private async writeAlong(name: string, text: string, batch: AlongRow[], keyed: boolean): Promise<AlongResult[]> {
    const rows = [...batch].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const fields = rows[0].values.map((_, field) => rows.map((row) => row.values[field]));
    const events = keyed ? rows.map((row) => ({ ...row.event, alongKey: row.key })) : rows.map((row) => row.event);
    const answered = await this.sql.prepared<{ key: string | null; committed?: string | null }>(name, text, [...fields, jsonOf(events)]);
    const keys = new Set<string>();
    const committed = new Map<string, CommittedEvent>();
    for (const row of answered) {
      if (row.key !== null) keys.add(row.key);
      if (row.committed) {
        const event = committedOf(row.committed);
        committed.set(event.eventId, event);
      }
    }
    return batch.map((row) => ({ written: keys.has(row.key), committed: committed.get(row.event.id) }));
  }

  async unresolved(query: UnresolvedQuery): Promise<UnresolvedPage> {
    const rows = await unavailableOnOutage(() =>
      this.sql.query<UnresolvedRow>(UNRESOLVED_SQL, [
        query.attemptedBefore,
        query.attemptedSince ?? null,
        query.reference ?? null,
        query.exceptRequestId ?? null,
        query.after?.occurredAt ?? null,
        query.after?.id ?? null,
        query.limit + 1,
      ]),
    );
    const calls = rows.slice(0, query.limit).map((row): UnresolvedCall => ({
      operation: row.operation,
      reference: row.reference,
      customerId: row.customer_id ?? undefined,
      clientId: row.client_id ?? undefined,
      clientName: row.client_name ?? undefined,
      attemptedAt: row.occurred_at,
      requestId: row.request_id,
      state: row.ended_unknown ? 'unknown' : 'no_outcome',
      errorId: row.unknown_error_id ?? undefined,
      position: { occurredAt: row.position, id: row.id },
    }));
    return rows.length > query.limit ? { calls, next: calls[calls.length - 1].position } : { calls };
  }
}

/** An event as its statement answered it (row_to_json of RECEIPT_COLUMNS: the hash as `\\x…` hex). */
function committedOf(json: string): CommittedEvent {
  const row = JSON.parse(json) as Omit<ReceiptRow, 'hash'> & { hash: string };
  return toCommittedEvent({ ...row, hash: Buffer.from(row.hash.replace(/^\\x/, ''), 'hex') });
}

/** The column types the statement for one event alone knows how to write (asJsonWrites). */
const ONE_ROW_TYPES = new Set(['uuid', 'varchar', 'smallint', 'integer', 'boolean', 'jsonb']);

/**
 * How one column's value goes as a parameter, written as its JSON would be (jsonOf and
 * json_to_recordset), chosen by the column: in jsonb, anything but null or undefined as its JSON
 * text (a string too, as JSON reads it); elsewhere, left out (undefined) and numbers JSON has no
 * text for (NaN, Infinity) as NULL, strings and booleans as they are (pg encodes strings as UTF-8,
 * a lone surrogate as U+FFFD, as jsonOf makes them well formed). A value of another kind, which the
 * row's type does not allow, fails the event's write rather than being stored otherwise than
 * its JSON would be.
 */
function asJsonWrites(type: string): (value: unknown) => unknown {
  if (!ONE_ROW_TYPES.has(type)) throw new Error(`audit_events has a column of type ${type}, which an event written alone cannot write as its JSON would`);
  if (type === 'jsonb') return (value) => (value === undefined || value === null ? null : jsonOf(value));
  return (value) => {
    if (value === undefined || value === null) return null;
    if (typeof value === 'number') return Number.isFinite(value) ? value : null;
    if (typeof value === 'string' || typeof value === 'boolean') return value;
    throw new TypeError(`An audit event's ${type} column given a ${typeof value}`);
  };
}

/**
 * Rows as one JSON text, every string in it well-formed. JSON.stringify writes a lone surrogate as
 * a `\udXXX` escape, which PostgreSQL refuses to read as text; the service's text reaches the
 * database with U+FFFD in its place (as pg's UTF-8 encoding of any other parameter gives). The
 * strings are mended only when the text holds an escape: JSON.stringify writes `\u` for nothing
 * but those and control characters. A NUL stays `\u0000`, which PostgreSQL's text cannot hold:
 * it refuses that event's statement, as it refuses a NUL in any parameter, and the group commit
 * then writes the others without it. JSON has no NaN nor Infinity: such a number (which nothing
 * makes: latencies are rounded differences of the clock) is stored as NULL, and the event is kept.
 */
function jsonOf(rows: unknown): string {
  const json = JSON.stringify(rows);
  if (!json.includes('\\u')) return json;
  return JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'string' ? value.toWellFormed() : value));
}
