import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { whileDatabaseAvailable } from '../../database/store-errors';
import { CustomerOwnership, OwnershipOrigin } from '../domain/customer-ownership.port';
import { CustomerTenantEntity } from './customer-tenant.entity';

@Injectable()
export class TypeOrmCustomerOwnershipRepository extends CustomerOwnership {
  constructor(@InjectRepository(CustomerTenantEntity) private readonly rows: Repository<CustomerTenantEntity>) {
    super();
  }

  async tenantOf(customerId: string): Promise<string | undefined> {
    const row = await whileDatabaseAvailable(() => this.rows.findOneBy({ customerId }));
    return row?.tenant;
  }

  assign(customerId: string, tenant: string, origin: OwnershipOrigin): Promise<string> {
    return whileDatabaseAvailable(async () => {
      await this.rows.createQueryBuilder().insert().values({ customerId, tenant, linkedBy: origin }).orIgnore().execute();
      const row = await this.rows.findOneByOrFail({ customerId });
      return row.tenant;
    });
  }
}
