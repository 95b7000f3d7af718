import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Repository } from 'typeorm';
import { unavailableOnOutage } from '../../../database/store-errors';
import { CustomerNotFound } from '../domain/customers.errors';
import { Binding, CustomerOwner, CustomerOwnership, OwnershipOrigin } from '../domain/customer-ownership.port';
import { CustomerTenantEntity } from './customer-tenant.entity';

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
export class PostgresCustomerOwnershipRepository extends CustomerOwnership {
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

  assign(customerId: string, tenant: string, origin: OwnershipOrigin, endUser?: string): Promise<string> {
    return unavailableOnOutage(async () => {
      await this.rows
        .createQueryBuilder()
        .insert()
        .values({ customerId, tenant, linkedBy: origin, endUser: endUser ?? null })
        .orIgnore()
        .execute();
      const [row]: OwnerRow[] = await this.rows.query('SELECT tenant, end_user FROM customer_tenants WHERE customer_id = $1', [customerId]);
      this.known.set(customerId, ownerOfRow(row));
      return row.tenant;
    });
  }

  async bind(customerId: string, tenant: string, endUser: string): Promise<Binding> {
    // Set once: only where the tenant holds it and no end user has it yet.
    const [{ bound }]: { bound: number }[] = await unavailableOnOutage(() =>
      this.rows.query(
        `WITH bound AS (
           UPDATE customer_tenants SET end_user = $3 WHERE customer_id = $1 AND tenant = $2 AND end_user IS NULL RETURNING 1
         ) SELECT count(*)::int AS bound FROM bound`,
        [customerId, tenant, endUser],
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
}
