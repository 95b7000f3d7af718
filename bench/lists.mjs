// A partner's lists at scale: a page of bank accounts and of customers for a tenant with `accounts`
// accounts (1,000,000 by default) over a fifth as many customers, beside a second tenant of a tenth
// of that. Rows are made by generate_series in PostgreSQL itself, spread over 400 days, half EUR and
// half GBP; one end user holds three customers (five accounts each). Queries go through the
// service's own repositories, so they are the SQL GET /api/v1/bank-accounts and GET /api/v1/customers
// run. Lists never read the sealed identifiers: the column holds a value of a sealed one's length.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { benchDatabase, dist, fixed, table, timed } from './support.mjs';

const QUERIES = 500;
const CHUNK = 500_000;
const END_USER = '00000000-0000-8000-8000-00000000e0e0';

const FILL_CUSTOMERS = `
INSERT INTO customer_tenants (customer_id, tenant, linked_by, end_user, reference, country, created_at)
SELECT md5($3::text || g::text)::uuid, $3::text, 'created', NULL, gen_random_uuid(), 'DE', now() - (random() * interval '400 days')
FROM generate_series($1::bigint, $2::bigint) AS g`;

const FILL_ACCOUNTS = `
INSERT INTO bank_accounts (id, tenant, customer_id, currency, status, reference, created_at, identifiers, identifiers_key, last4, origin)
SELECT gen_random_uuid()::text, $3::text, md5($3::text || (g % $4)::text)::uuid, CASE WHEN g % 2 = 0 THEN 'EUR' ELSE 'GBP' END, 'active', gen_random_uuid(),
       now() - (random() * interval '400 days'), repeat('x', 180), 'bench', lpad((g % 10000)::text, 4, '0'), 'opened'
FROM generate_series($1::bigint, $2::bigint) AS g`;

export async function listsAtScale({ accounts = 1_000_000 } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const database = await benchDatabase(log);
  log(`database: ${database.description}`);
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions, runMigrations } = dist('database/typeorm-options.js');
  const { Sql } = dist('database/sql.js');
  const { SharedCommit } = dist('database/shared-commit.js');
  const { JoseSealedBox } = dist('common/sealing/jose-sealed-box.js');
  const { PostgresBankAccountRepository } = dist('partner-api/bank-accounts/persistence/postgres-bank-account.repository.js');
  const { PostgresCustomerOwnershipRepository } = dist('partner-api/customers/persistence/postgres-customer-ownership.repository.js');
  const { CustomerTenantEntity } = dist('partner-api/customers/persistence/customer-tenant.entity.js');
  const dataSource = new DataSource({
    ...dataSourceOptions(database.ownerUrl ?? database.url, { poolSize: 4, entities: [CustomerTenantEntity] }),
    logging: false,
  });
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    const fillStart = performance.now();
    const tenants = [
      ['tenant-big', accounts],
      ['tenant-other', Math.max(10, Math.floor(accounts / 10))],
    ];
    for (const [tenant, count] of tenants) {
      const customers = Math.max(5, Math.floor(count / 5));
      for (let from = 0; from < customers; from += CHUNK) await dataSource.query(FILL_CUSTOMERS, [from, Math.min(customers, from + CHUNK) - 1, tenant]);
      for (let from = 0; from < count; from += CHUNK) {
        await dataSource.query(FILL_ACCOUNTS, [from, Math.min(count, from + CHUNK) - 1, tenant, customers]);
        log(
          `${tenant}: ${Math.min(count, from + CHUNK).toLocaleString('en')} of ${count.toLocaleString('en')} accounts (${fixed((performance.now() - fillStart) / 1000, 0)} s)`,
        );
      }
    }
    // One end user of the big tenant, with three customers (and their accounts, spread over the 400 days).
    await dataSource.query(
      `UPDATE customer_tenants SET end_user = $1 WHERE tenant = 'tenant-big' AND customer_id IN (SELECT customer_id FROM customer_tenants WHERE tenant = 'tenant-big' ORDER BY customer_id LIMIT 3)`,
      [END_USER],
    );
    await dataSource.query('VACUUM ANALYZE bank_accounts');
    await dataSource.query('VACUUM ANALYZE customer_tenants');
    const fillSeconds = (performance.now() - fillStart) / 1000;
    const [{ rows, size }] = await dataSource.query(
      `SELECT count(*)::bigint AS rows, pg_size_pretty(pg_total_relation_size('bank_accounts')) AS size FROM bank_accounts`,
    );

    const sql = Sql.of(dataSource);
    const records = new PostgresBankAccountRepository(sql, new JoseSealedBox(randomBytes(32)), new SharedCommit(sql));
    const directory = new PostgresCustomerOwnershipRepository(dataSource.getRepository(CustomerTenantEntity));
    const big = { tenant: 'tenant-big' };
    const sampleCustomers = await dataSource.query(
      `SELECT customer_id FROM customer_tenants WHERE tenant = 'tenant-big' ORDER BY md5(customer_id::text) LIMIT ${QUERIES}`,
    );
    // Positions deep in the list: the cursors of pages far down, found by walking 10,000 rows at a time.
    const deep = await dataSource.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id FROM bank_accounts WHERE tenant = 'tenant-big' ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`,
      [Math.floor(accounts / 2)],
    );
    const halfway = deep[0];
    const to = new Date();
    const from = new Date(to.getTime() - 30 * 24 * 3600 * 1000);
    const [{ held }] = await dataSource.query(
      `SELECT count(*)::int AS held FROM bank_accounts a JOIN customer_tenants c USING (customer_id) WHERE c.end_user = $1`,
      [END_USER],
    );
    const endUser = await records.list({ ...big, endUser: END_USER }, 100);
    if (endUser.accounts.length !== held) throw new Error(`the end user's list held ${endUser.accounts.length} accounts, not ${held}`);
    const queries = {
      'accounts: first page of 100': await timed(QUERIES, () => records.list(big, 100)),
      'accounts: a page of 100 halfway down (its cursor)': await timed(QUERIES, () => records.list(big, 100, halfway)),
      'accounts: GBP only, first page of 100': await timed(QUERIES, () => records.list({ ...big, currency: 'GBP' }, 100)),
      'accounts: the last 30 days, first page of 100': await timed(QUERIES, () => records.list({ ...big, from, to }, 100)),
      'accounts: one customer’s': await timed(QUERIES, (i) =>
        records.list({ ...big, customerId: sampleCustomers[i % sampleCustomers.length].customer_id }, 100),
      ),
      [`accounts: an end user’s (${held}, of 3 customers)`]: await timed(QUERIES, () => records.list({ ...big, endUser: END_USER }, 100)),
      'customers: first page of 100': await timed(QUERIES, () => directory.list(big, 100)),
      'customers: an end user’s (3 of them)': await timed(QUERIES, () => directory.list({ ...big, endUser: END_USER }, 100)),
    };
    return { rows: Number(rows), accounts, size, fillSeconds, queries, database: database.description };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

export function report({ rows, accounts, size, fillSeconds, queries, database }) {
  return [
    `${rows.toLocaleString('en')} bank accounts (${size} with indexes), ${accounts.toLocaleString('en')} of them one tenant's, filled in ${fixed(fillSeconds, 0)} s; database: ${database}. ${QUERIES} queries per line, one at a time, through the service's repositories.`,
    '',
    table(
      ['List (a tenant of ' + accounts.toLocaleString('en') + ' accounts)', 'p50 ms', 'p99 ms'],
      Object.entries(queries).map(([name, t]) => [name, fixed(t.p50, 2), fixed(t.p99, 2)]),
    ),
  ].join('\n');
}
