import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Repository } from 'typeorm';
import { unavailableOnOutage } from '../../../database/store-errors';
import { CustomerNotFound } from '../domain/customers.errors';
import { Binding, CustomerDetails, CustomerOwner, CustomerOwnership, OwnershipOrigin } from '../domain/customer-ownership.port';
import { CustomerDirectory, CustomerFilter, CustomerPage, CustomerRecord } from '../domain/customer-directory.port';
import { ListPosition, positionTimeSql } from '../../../common/domain/list-cursor';
import { CustomerTenantEntity } from './customer-tenant.entity';
import type { EventOrigin } from '../../../common/domain/event-origin';
import { eventInsertSql, nextSequenceSql } from '../../../database/partner-event-outbox.sql';

/** How many customers' owners one instance keeps in memory (about 200 bytes each). */
const REMEMBERED_CUSTOMERS = 100_000;

/** Most customers one end user is shown (GET /api/v1/me). */
const MOST_CUSTOMERS_PER_END_USER = 1000;

interface OwnerRow {
  tenant: string;
  end_user: string | null;
}

const ownerOfRow = (row: OwnerRow): CustomerOwner => (row.end_user === null ? { tenant: row.tenant } : { tenant: row.tenant, endUser: row.end_user });

@Injectable()
export class PostgresCustomerOwnershipRepository extends CustomerOwnership implements CustomerDirectory {
  /**
   * A customer's tenant never changes once written (the first assignment wins, and nothing
   * deletes a row), and its end user, once set, never changes either. So an owner found once is
   * true for good, on every replica, and is kept (bounded, least recently used first out). An
   * unknown customer is not remembered: it may be assigned a moment later. A customer with no end
   * user yet may be bound on another replica: whoever needs the end user asks `fresh`.
   */
  private readonly known = new LRUCache<string, CustomerOwner>({ max: REMEMBERED_CUSTOMERS });

  constructor(@InjectRepository(CustomerTenantEntity) private readonly rows: Repository<CustomerTenantEntity>) {
    super();
  }

  async ownerOf(customerId: string, options: { fresh?: boolean } = {}): Promise<CustomerOwner | undefined> {
    const remembered = this.known.get(customerId);
    if (remembered !== undefined && (remembered.endUser !== undefined || !options.fresh)) return remembered;
    const found: OwnerRow[] = await unavailableOnOutage(() =>
      this.rows.query('SELECT tenant, end_user FROM customer_tenants WHERE customer_id = $1', [customerId]),
    );
    if (found.length === 0) return undefined;
    const owner = ownerOfRow(found[0]);
    this.known.set(customerId, owner);
    return owner;
  }

  assign(
    customerId: string,
    tenant: string,
    origin: OwnershipOrigin,
    endUser?: string,
    details: CustomerDetails = {},
    recordedBy: EventOrigin = {},
  ): Promise<string> {
    return unavailableOnOutage(async () => {
      // The tenancy and its event in one statement (the outbox); the tenant that holds the customer afterwards, whoever wrote it.
      const [row]: OwnerRow[] = await this.rows.query(
        `WITH assigned AS (
           INSERT INTO customer_tenants (customer_id, tenant, linked_by, end_user, reference, country)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING
           RETURNING customer_id, tenant, end_user, reference, country, linked_by, created_at),
         ${eventInsertSql(
           'created',
           'customer.created',
           'customer',
           `SELECT a.tenant, a.customer_id::text AS resource_id, 1 AS sequence, $7::text AS request_id, a.reference::text AS reference,
                   $8::text AS audit_event_id,
                   jsonb_build_object('id', a.customer_id, 'end_user', a.end_user, 'origin', a.linked_by) AS data,
                   jsonb_build_object('id', a.customer_id, 'reference', a.reference, 'country', a.country, 'end_user', a.end_user,
                                      'created_at', a.created_at) AS snapshot
            FROM assigned a`,
         )}
         SELECT tenant, end_user FROM assigned
         UNION ALL (SELECT tenant, end_user FROM customer_tenants WHERE customer_id = $1)
         LIMIT 1`,
        [
          customerId,
          tenant,
          origin,
          endUser ?? null,
          details.reference ?? null,
          details.country ?? null,
          recordedBy.requestId ?? null,
          recordedBy.auditEventId ?? null,
        ],
      );
      this.known.set(customerId, ownerOfRow(row));
      return row.tenant;
    });
  }

  async bind(customerId: string, tenant: string, endUser: string, recordedBy: EventOrigin = {}): Promise<Binding> {
    // Set once: only where the tenant holds it and no end user has it yet; the binding and its event in one statement.
    const [{ bound }]: { bound: number }[] = await unavailableOnOutage(() =>
      this.rows.query(
        `WITH bound AS (
           UPDATE customer_tenants SET end_user = $3 WHERE customer_id = $1 AND tenant = $2 AND end_user IS NULL
           RETURNING customer_id, tenant, end_user, reference, country, created_at),
         ${eventInsertSql(
           'assigned',
           'customer.assigned',
           'customer',
           `SELECT b.tenant, b.customer_id::text AS resource_id, ${nextSequenceSql('customer', 'b.customer_id::text')} AS sequence,
                   $4::text AS request_id, NULL::text AS reference, $5::text AS audit_event_id,
                   jsonb_build_object('id', b.customer_id, 'end_user', b.end_user) AS data,
                   jsonb_build_object('id', b.customer_id, 'reference', b.reference, 'country', b.country, 'end_user', b.end_user,
                                      'created_at', b.created_at) AS snapshot
            FROM bound b`,
         )}
         SELECT count(*)::int AS bound FROM bound`,
        [customerId, tenant, endUser, recordedBy.requestId ?? null, recordedBy.auditEventId ?? null],
      ),
    );
    const owner = await this.ownerOf(customerId, { fresh: true });
    if (owner === undefined || owner.tenant !== tenant) throw new CustomerNotFound();
    if (bound === 1) return 'bound';
    return owner.endUser === endUser ? 'unchanged' : 'taken';
  }

  async customersOf(tenant: string, endUser: string): Promise<string[]> {
    const rows: { customer_id: string }[] = await unavailableOnOutage(() =>
      this.rows.query('SELECT customer_id FROM customer_tenants WHERE tenant = $1 AND end_user = $2 ORDER BY created_at, customer_id LIMIT $3', [
        tenant,
        endUser,
        MOST_CUSTOMERS_PER_END_USER,
      ]),
    );
    return rows.map((row) => row.customer_id);
  }

  async find(customerId: string): Promise<CustomerRecord | undefined> {
    const [row]: DirectoryRow[] = await unavailableOnOutage(() =>
      this.rows.query(`SELECT ${DIRECTORY_COLUMNS} FROM customer_tenants c WHERE c.customer_id = $1`, [customerId]),
    );
    return row ? recordOf(row) : undefined;
  }

  async list(filter: CustomerFilter, limit: number, after?: ListPosition): Promise<CustomerPage> {
    const values: unknown[] = [];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const where = [`c.tenant = ${bind(filter.tenant)}`];
    if (filter.endUser) where.push(`c.end_user = ${bind(filter.endUser)}::uuid`);
    if (filter.from) where.push(`c.created_at >= ${bind(filter.from)}::timestamptz`);
    if (filter.to) where.push(`c.created_at < ${bind(filter.to)}::timestamptz`);
    if (after) where.push(`(c.created_at, c.customer_id) < (${bind(after.at)}::timestamptz, ${bind(after.id)}::uuid)`);
    const rows: DirectoryRow[] = await unavailableOnOutage(() =>
      this.rows.query(
        `SELECT ${DIRECTORY_COLUMNS} FROM customer_tenants c WHERE ${where.join(' AND ')} ORDER BY c.created_at DESC, c.customer_id DESC LIMIT ${bind(limit + 1)}`,
        values,
      ),
    );
    const customers = rows.slice(0, limit).map(recordOf);
    return rows.length > limit ? { customers, next: customers[limit - 1].position } : { customers };
  }
}

interface DirectoryRow {
  customer_id: string;
  tenant: string;
  end_user: string | null;
  reference: string | null;
  country: string | null;
  linked_by: 'created' | 'linked';
  created_at: string;
  bank_account_ids: string[];
}

/** A customer's row, and its accounts' ids (the bank-accounts slice records them), oldest first. */
const DIRECTORY_COLUMNS = `c.customer_id, c.tenant, c.end_user, c.reference, c.country, c.linked_by, ${positionTimeSql('c.created_at')} AS created_at,
  ARRAY(SELECT a.id FROM bank_accounts a WHERE a.customer_id = c.customer_id AND a.tenant = c.tenant ORDER BY a.created_at, a.id LIMIT 1000) AS bank_account_ids`;

function recordOf(row: DirectoryRow): CustomerRecord {
  return {
    customerId: row.customer_id,
    tenant: row.tenant,
    ...(row.end_user ? { endUser: row.end_user } : {}),
    ...(row.reference ? { reference: row.reference } : {}),
    ...(row.country ? { country: row.country } : {}),
    origin: row.linked_by,
    createdAt: row.created_at,
    bankAccountIds: row.bank_account_ids,
    position: { at: row.created_at, id: row.customer_id },
  };
}
