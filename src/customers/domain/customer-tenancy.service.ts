import { Injectable } from '@nestjs/common';
import { CustomerOwnership } from './customer-ownership.port';
import { CustomerNotFound } from './customers.errors';

/** Answers "may this tenant act on this customer?" before anything is sent to the provider. */
@Injectable()
export class CustomerTenancy {
  constructor(private readonly ownership: CustomerOwnership) {}

  /** @throws CustomerNotFound when the customer is not the tenant's (or not known at all). */
  async assertVisibleTo(tenant: string, customerId: string): Promise<void> {
    if ((await this.ownership.tenantOf(customerId)) !== tenant) throw new CustomerNotFound();
  }
}
