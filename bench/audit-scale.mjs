// The audit log at scale: insert cost and the admin search's latency on an empty table and at
// `rows` events. Rows are made by generate_series in PostgreSQL itself (minutes, not hours), spread
// over 400 days, 100,000 customers and 20 clients, about one in ten with an error id; five tenants
// of about 20 % of the events each and one of 0.1 % (a partner's request log, newest first). Queries go
// through the service's own repository, so they are the SQL the admin API runs.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { benchDatabase, dist, fixed, table, timed } from './support.mjs';

const INSERTS = 2000;
const QUERIES = 500;
const CHUNK = 1_000_000;

function event(now) {
  return {
    id: randomUUID(),
    occurredAt: now,
    requestId: randomUUID(),
    clientId: '00000000-0000-4000-8000-000000000001',
    clientName: 'bench',
    tenant: 'default',
    operation: 'bank_account.create',
    phase: 'succeeded',
    httpMethod: 'POST',
    route: '/api/v1/bank-accounts',
    reference: randomUUID(),
    customerId: randomUUID(),
    currency: 'EUR',
    httpStatus: 201,
    upstreamStatus: 200,
    latencyMs: 12,
    upstreamLatencyMs: 8,
    sourceIp: '127.0.0.1',
    replayed: false,
  };
}

const FILL = `
INSERT INTO audit_events (id, occurred_at, request_id, client_id, client_name, caller_kind, tenant, operation, phase, http_method, route,
  reference, customer_id, currency, http_status, upstream_status, error_id, error_code, latency_ms, upstream_latency_ms, source_ip, replayed)
SELECT gen_random_uuid(),
       now() - (random() * interval '400 days'),
       md5(g::text),
       md5('client' || (g % 20)::text)::uuid,
       'client-' || (g % 20),
       'partner',
       CASE WHEN g % 1000 = 7 THEN 'tenant-small' ELSE 'tenant-' || ((g / 3) % 5) END,
       (ARRAY['customer.create','balance.read','bank_account.create','audit.query'])[1 + g % 4],
       CASE WHEN g % 10 = 0 THEN 'rejected' WHEN g % 3 = 0 THEN 'attempted' ELSE 'succeeded' END,
       CASE WHEN g % 4 = 1 THEN 'GET' ELSE 'POST' END,
       '/api/v1/bank-accounts',
       gen_random_uuid(),
       md5('customer' || (g % 100000)::text)::uuid,
       CASE WHEN g % 2 = 0 THEN 'EUR' ELSE 'GBP' END,
       CASE WHEN g % 10 = 0 THEN 400 ELSE 201 END,
       200,
       CASE WHEN g % 10 = 0 THEN gen_random_uuid() END,
       CASE WHEN g % 10 = 0 THEN 'REQUEST.INVALID' END,
       5 + g % 50, 3 + g % 40, '10.0.' || (g % 250) || '.' || (g % 200), false
FROM generate_series($1::bigint, $2::bigint) AS g`;

export async function auditAtScale({ rows = 10_000_000, withoutIndex } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const database = await benchDatabase(log);
  log(`database: ${database.description}`);
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions, runMigrations } = dist('database/typeorm-options.js');
  const { PostgresAuditLogRepository } = dist('audit/trail/persistence/postgres-audit-log.repository.js');
  const { PostgresAuditSearchRepository } = dist('audit/search/persistence/postgres-audit-search.repository.js');
  const { PostgresRequestLogRepository } = dist('audit/requests/persistence/postgres-request-log.repository.js');
  const { AuditEventEntity } = dist('audit/trail/persistence/audit-event.entity.js');
  const { Sql } = dist('database/sql.js');
  const { SharedCommit } = dist('database/shared-commit.js');
  const dataSource = new DataSource({ ...dataSourceOptions(database.ownerUrl ?? database.url, { poolSize: 4, entities: [AuditEventEntity] }), logging: false });
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    const repository = new PostgresAuditLogRepository(dataSource.getRepository(AuditEventEntity), Sql.of(dataSource), new SharedCommit(Sql.of(dataSource)));
    const search = new PostgresAuditSearchRepository(dataSource.getRepository(AuditEventEntity), Sql.of(dataSource));
    const requestLog = new PostgresRequestLogRepository(dataSource.getRepository(AuditEventEntity));

    log(`${INSERTS} inserts into the empty table`);
    const emptyInsert = await timed(INSERTS, () => repository.append(event(new Date())));

    // A bulk load: the secondary indexes are dropped, the rows generated, the indexes built again
    // (as a restore would). Inserting 10 million rows through eight live indexes takes far longer.
    const fillStart = performance.now();
    const indexes = await dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit_events' AND indexname <> 'audit_events_pkey'`);
    for (const { indexname } of indexes) await dataSource.query(`DROP INDEX "${indexname}"`);
    for (let from = 1; from <= rows; from += CHUNK) {
      const to = Math.min(rows, from + CHUNK - 1);
      await dataSource.query(FILL, [from, to]);
      log(`filled ${to.toLocaleString('en')} of ${rows.toLocaleString('en')} (${fixed((performance.now() - fillStart) / 1000, 0)} s)`);
    }
    for (const { indexname, indexdef } of indexes) {
      await dataSource.query(indexdef);
      log(`index ${indexname} built (${fixed((performance.now() - fillStart) / 1000, 0)} s)`);
    }
    if (withoutIndex !== undefined) {
      if (!indexes.some(({ indexname }) => indexname === withoutIndex)) throw new Error(`no index ${withoutIndex} on audit_events`);
      await dataSource.query(`DROP INDEX "${withoutIndex}"`);
      log(`index ${withoutIndex} dropped`);
    }
    await dataSource.query('VACUUM ANALYZE audit_events');
    const fillSeconds = (performance.now() - fillStart) / 1000;
    const [{ count, size }] = await dataSource.query(
      `SELECT count(*)::bigint AS count, pg_size_pretty(pg_total_relation_size('audit_events')) AS size FROM audit_events`,
    );

    log(`${INSERTS} inserts at ${Number(count).toLocaleString('en')} events`);
    const fullInsert = await timed(INSERTS, () => repository.append(event(new Date())));

    // Values that exist, sampled from the table: a share of its pages large enough to hold about ten
    // times what is needed (all of them for a small table, as in CI's smoke run).
    const share = (wanted) => Math.min(100, Math.max(0.1, (100 * 10 * wanted) / Number(count)));
    const sample = await dataSource.query(
      `SELECT reference, customer_id, occurred_at FROM audit_events TABLESAMPLE SYSTEM (${share(QUERIES)}) LIMIT ${QUERIES}`,
    );
    const errors = await dataSource.query(
      `SELECT error_id, tenant FROM audit_events TABLESAMPLE SYSTEM (${share(QUERIES * 10)}) WHERE error_id IS NOT NULL LIMIT ${QUERIES}`,
    );
    const requests = await dataSource.query(
      `SELECT request_id, tenant FROM audit_events TABLESAMPLE SYSTEM (${share(QUERIES)}) WHERE tenant IS NOT NULL LIMIT ${QUERIES}`,
    );
    if (sample.length === 0 || errors.length === 0) throw new Error(`the table is too small to sample (${count} events): use --rows 1000 or more`);
    const month = 30 * 24 * 3600 * 1000;
    const queries = {
      'by reference': await timed(QUERIES, (i) => search.find({ reference: sample[i % sample.length].reference }, 50)),
      'by error_id': await timed(QUERIES, (i) => search.find({ errorId: errors[i % errors.length].error_id }, 50)),
      'customer + 30-day range, first page of 50': await timed(QUERIES, (i) => {
        const to = new Date(sample[i % sample.length].occurred_at);
        return search.find({ customerId: sample[i % sample.length].customer_id, from: new Date(to.getTime() - month), to: new Date(to.getTime() + 1) }, 50);
      }),
      'newest page, no filter': await timed(QUERIES, () => search.find({}, 50)),
      // A partner's request log (GET /api/v1/requests): its own tenant's requests, newest first.
      'request log: newest page of 20, a tenant of 20 %': await timed(QUERIES, () => requestLog.list({ tenant: 'tenant-1' }, 20)),
      'request log: newest page of 20, a tenant of 0.1 %': await timed(QUERIES, () => requestLog.list({ tenant: 'tenant-small' }, 20)),
      'request log: by error_id': await timed(QUERIES, (i) =>
        requestLog.list({ tenant: errors[i % errors.length].tenant, errorId: errors[i % errors.length].error_id }, 20),
      ),
      'request log: 4xx, newest page of 20, a tenant of 20 %': await timed(QUERIES, () => requestLog.list({ tenant: 'tenant-1', statusClass: 4 }, 20)),
      'request log: 5xx (none there), a tenant of 20 %': await timed(QUERIES, () => requestLog.list({ tenant: 'tenant-1', statusClass: 5 }, 20)),
      'request log: one request’s timeline': await timed(QUERIES, (i) =>
        requestLog.timeline(requests[i % requests.length].tenant, requests[i % requests.length].request_id, 200),
      ),
    };
    return { rows: Number(count), size, fillSeconds, emptyInsert, fullInsert, queries, database: database.description, withoutIndex };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

export function report({ rows, size, fillSeconds, emptyInsert, fullInsert, queries, database, withoutIndex }) {
  return [
    `${rows.toLocaleString('en')} events (${size} with indexes), filled in ${fixed(fillSeconds, 0)} s; database: ${database}. ${INSERTS} single-event inserts and ${QUERIES} queries per line, one at a time, through the service's repository.${withoutIndex === undefined ? '' : ` Without the index ${withoutIndex}.`}`,
    '',
    table(
      ['Insert (one event, as a request writes it)', 'mean ms', 'p50 ms', 'p99 ms'],
      [
        ['empty table', fixed(emptyInsert.mean, 2), fixed(emptyInsert.p50, 2), fixed(emptyInsert.p99, 2)],
        [`${rows.toLocaleString('en')} events`, fixed(fullInsert.mean, 2), fixed(fullInsert.p50, 2), fixed(fullInsert.p99, 2)],
        ['ratio', fixed(fullInsert.mean / emptyInsert.mean, 2), fixed(fullInsert.p50 / emptyInsert.p50, 2), fixed(fullInsert.p99 / emptyInsert.p99, 2)],
      ],
    ),
    '',
    table(
      ['Query (support’s search; a partner’s request log)', 'p50 ms', 'p99 ms'],
      Object.entries(queries).map(([name, t]) => [name, fixed(t.p50, 2), fixed(t.p99, 2)]),
    ),
  ].join('\n');
}
