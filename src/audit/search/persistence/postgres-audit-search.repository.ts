import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { isUuid } from '../../../common/domain/identifiers';
import { OPERATION } from '../../../common/domain/audit-operations';
import { Sql } from '../../../database/sql';
import { unavailableOnOutage } from '../../../database/store-errors';
import { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from '../../trail/domain/audit-event';
import { AuditEventEntity } from '../../trail/persistence/audit-event.entity';
import { auditQueryKeyFor } from '../../persistence/audit-query-key.sql';
import { AuditEventMapper } from '../../trail/persistence/audit-event.mapper';
import { POSITION_SQL } from '../../trail/persistence/postgres-audit-log.repository';
import { AccessReport, AuditSearch } from '../domain/audit-search.port';

interface PersonRow {
  caller_kind: 'staff' | 'admin';
  who: string;
  name: string | null;
  searches: number;
  with_reason: number;
  customers: number;
  references: number;
  first_at: Date;
  last_at: Date;
}

interface CustomerRow {
  customer_id: string;
  searches: number;
  people: { caller_kind: 'staff' | 'admin'; who: string; name: string | null; searches: number }[];
}

/**
 * Column types whose values pg's own parsers give as TypeORM's hydration would (a Date for
 * timestamptz, an object for jsonb, numbers for smallint and integer), so a row read on pg is the
 * entity TypeORM would have built.
 */
const AS_PG_READS_THEM = new Set(['uuid', 'varchar', 'smallint', 'integer', 'boolean', 'timestamptz', 'jsonb']);

/**
 * A SELECT list of an entity's selected columns, each named as its property. Refuses, at start, a
 * column TypeORM would read otherwise: a transformer, an embedded entity, a relation, a virtual
 * property, or a type outside AS_PG_READS_THEM.
 */
export function selectListOf(
  columns: readonly Pick<
    ColumnMetadata,
    'isSelect' | 'databaseName' | 'propertyName' | 'type' | 'transformer' | 'embeddedMetadata' | 'relationMetadata' | 'isVirtualProperty'
  >[],
  alias: string,
): string {
  const selected = columns.filter((column) => column.isSelect);
  const unlike = selected.find(
    (column) =>
      column.transformer !== undefined ||
      column.embeddedMetadata !== undefined ||
      column.relationMetadata !== undefined ||
      column.isVirtualProperty ||
      typeof column.type !== 'string' ||
      !AS_PG_READS_THEM.has(column.type),
  );
  if (unlike) throw new Error(`Column ${unlike.databaseName}: TypeORM reads it otherwise than pg does; read it through TypeORM`);
  return selected.map((column) => `${alias}."${column.databaseName}" AS "${column.propertyName}"`).join(', ');
}

/** The search over audit_events: filters on the indexed columns, newest first, keyset pages. */
@Injectable()
export class PostgresAuditSearchRepository extends AuditSearch {
  /**
   * The events' columns, as the entity's properties (selectListOf): the search and the read by id
   * are SQL on pg, with the rows TypeORM would have built. TypeORM's query builder built each query
   * anew; without it, a read by id costs the gateway half the CPU it did (docs/benchmarks.md).
   */
  private readonly columns: string;
  /** One event by id, as a prepared statement. */
  private readonly byId: string;

  constructor(
    @InjectRepository(AuditEventEntity) private readonly rows: Repository<AuditEventEntity>,
    private readonly sql: Sql,
  ) {
    super();
    this.columns = selectListOf(rows.metadata.columns, 'e');
    this.byId = `SELECT ${this.columns} FROM audit_events e WHERE e.id = $1`;
  }

  async find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage> {
    const values: unknown[] = [];
    const bind = (value: unknown): string => `$${values.push(value)}`;
    const where: string[] = [];
    if (filter.reference) where.push(`e.reference = ${bind(filter.reference)}`);
    if (filter.customerId) where.push(`e.customer_id = ${bind(filter.customerId)}`);
    if (filter.clientId) where.push(`e.client_id = ${bind(filter.clientId)}`);
    if (filter.staffId) where.push(`e.staff_id = ${bind(filter.staffId)}`);
    if (filter.operation) where.push(`e.operation = ${bind(filter.operation)}`);
    // A search names the reference or customer it looked at: a customer's events are theirs, not the
    // searches about them (operation=audit.query finds those). Said as the indexes' second key, so
    // that their scan skips the searches rather than reading and dropping them (audit-query-key.sql.ts).
    if (filter.reference || filter.customerId) where.push(auditQueryKeyFor(filter.operation));
    if (filter.phase) where.push(`e.phase = ${bind(filter.phase)}`);
    if (filter.from) where.push(`e.occurred_at >= ${bind(filter.from)}`);
    if (filter.to) where.push(`e.occurred_at < ${bind(filter.to)}`);
    if (filter.errorId) {
      // Bound once for each column: a parameter has one type, and the two columns' differ (uuid, varchar).
      where.push(
        isUuid(filter.errorId)
          ? `(e.error_id = ${bind(filter.errorId)} OR e.upstream_error_id = ${bind(filter.errorId)})`
          : `e.upstream_error_id = ${bind(filter.errorId)}`,
      );
    }
    if (after) where.push(`(e.occurred_at, e.id) < (CAST(${bind(after.occurredAt)} AS timestamptz), CAST(${bind(after.id)} AS uuid))`);
    const text =
      `SELECT ${this.columns}, ${POSITION_SQL} AS position FROM audit_events e` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY e.occurred_at DESC, e.id DESC LIMIT ${bind(limit + 1)}`;

    const rows = await unavailableOnOutage(() => this.sql.query<AuditEventEntity & { position: string }>(text, values));
    const events = rows.slice(0, limit).map((row) => AuditEventMapper.toDomain(row));
    if (rows.length <= limit) return { events };
    const last = rows[limit - 1];
    return { events, next: { occurredAt: last.position, id: last.id } };
  }

  async accessReport(from: Date, to: Date, limit: number): Promise<AccessReport> {
    // The searches of the audit log (their own audit.query events) by a staff member or an admin token, in the period, that
    // were answered: a search refused (no reason, no second factor, another role) showed nothing.
    const searches = `
      SELECT e.caller_kind, COALESCE(e.staff_id, e.client_id::text) AS who, e.client_name, e.customer_id, e.reference, e.access_reason, e.occurred_at
        FROM audit_events e
       WHERE e.operation = $1 AND e.phase = 'succeeded' AND e.caller_kind IN ('staff', 'admin') AND e.occurred_at >= $2 AND e.occurred_at < $3`;
    const [people, customers] = await unavailableOnOutage(() =>
      Promise.all([
        this.rows.query<PersonRow[]>(
          `SELECT s.caller_kind, s.who, max(s.client_name) AS name, count(*)::int AS searches, count(s.access_reason)::int AS with_reason,
                  count(DISTINCT s.customer_id)::int AS customers, count(DISTINCT s.reference)::int AS "references",
                  min(s.occurred_at) AS first_at, max(s.occurred_at) AS last_at
             FROM (${searches}) s
            GROUP BY s.caller_kind, s.who
            ORDER BY searches DESC, s.who
            LIMIT $4`,
          [OPERATION.queryAudit, from, to, limit + 1],
        ),
        this.rows.query<CustomerRow[]>(
          `SELECT c.customer_id, sum(c.searches)::int AS searches,
                  json_agg(json_build_object('caller_kind', c.caller_kind, 'who', c.who, 'name', c.name, 'searches', c.searches) ORDER BY c.searches DESC, c.who) AS people
             FROM (SELECT s.customer_id, s.caller_kind, s.who, max(s.client_name) AS name, count(*)::int AS searches
                     FROM (${searches}) s WHERE s.customer_id IS NOT NULL
                    GROUP BY s.customer_id, s.caller_kind, s.who) c
            GROUP BY c.customer_id
            ORDER BY searches DESC, c.customer_id
            LIMIT $4`,
          [OPERATION.queryAudit, from, to, limit + 1],
        ),
      ]),
    );
    return {
      truncated: people.length > limit || customers.length > limit,
      people: people.slice(0, limit).map((row) => ({
        callerKind: row.caller_kind,
        id: row.who,
        ...(row.name === null ? {} : { name: row.name }),
        searches: row.searches,
        withReason: row.with_reason,
        customers: row.customers,
        references: row.references,
        firstAt: row.first_at,
        lastAt: row.last_at,
      })),
      customers: customers.slice(0, limit).map((row) => ({
        customerId: row.customer_id,
        searches: row.searches,
        people: row.people.map((person) => ({
          callerKind: person.caller_kind,
          id: person.who,
          ...(person.name === null ? {} : { name: person.name }),
          searches: person.searches,
        })),
      })),
    };
  }

  async get(id: string): Promise<AuditEvent | undefined> {
    const [row] = await unavailableOnOutage(() => this.sql.prepared<AuditEventEntity>('audit-event-by-id', this.byId, [id]));
    return row ? AuditEventMapper.toDomain(row) : undefined;
  }
}
