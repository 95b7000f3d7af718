import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Repository } from 'typeorm';
import { unavailableOnOutage } from '../../database/store-errors';
import { CustomerOwnership, OwnershipOrigin } from '../domain/customer-ownership.port';
import { CustomerTenantEntity } from './customer-tenant.entity';

/** How many customers' tenants one instance keeps in memory (about 150 bytes each). */
const REMEMBERED_CUSTOMERS = 100_000;

@Injectable()
export class TypeOrmCustomerOwnershipRepository extends CustomerOwnership {
  /**
   * A customer's tenant never changes once written: the first assignment wins, and nothing updates
   * or deletes a row. So an answer found once is true for good, on every replica, and is kept
   * (bounded, least recently used first out). An unknown customer is not remembered: it may be
   * assigned a moment later.
   */
  private readonly known = new LRUCache<string, string>({ max: REMEMBERED_CUSTOMERS });

  constructor(@InjectRepository(CustomerTenantEntity) private readonly rows: Repository<CustomerTenantEntity>) {
    super();
  }

  async tenantOf(customerId: string): Promise<string | undefined> {
    const remembered = this.known.get(customerId);
    if (remembered !== undefined) return remembered;
    const found: { tenant: string }[] = await unavailableOnOutage(() =>
      this.rows.query('SELECT tenant FROM customer_tenants WHERE customer_id = $1', [customerId]),
    );
    const tenant = found[0]?.tenant;
    if (tenant !== undefined) this.known.set(customerId, tenant);
    return tenant;
  }

  assign(customerId: string, tenant: string, origin: OwnershipOrigin): Promise<string> {
    return unavailableOnOutage(async () => {
      await this.rows.createQueryBuilder().insert().values({ customerId, tenant, linkedBy: origin }).orIgnore().execute();
      const row = await this.rows.findOneByOrFail({ customerId });
      this.known.set(customerId, row.tenant);
      return row.tenant;
    });
  }
}
