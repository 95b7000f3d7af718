import { Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { OPERATION } from '../../common/domain/audit-operations';
import { Idempotent } from '../../idempotency/domain/idempotency.service';
import { ProviderWrites } from '../../idempotency/domain/provider-writes.service';
import { CreatedCustomer, CustomerGateway, NewCustomer } from './customer.gateway.port';
import { CustomerOwnership } from './customer-ownership.port';

export type CustomerRequest = Omit<NewCustomer, 'reference'> & { readonly reference?: string };

@Injectable()
export class CustomersService {
  private readonly logger = new Logger('Customers');

  constructor(
    private readonly gateway: CustomerGateway,
    private readonly ownership: CustomerOwnership,
    private readonly writes: ProviderWrites,
  ) {}

  /** Creates the customer at the provider, once per reference, and gives it to the caller's tenant. */
  async create(caller: AuthenticatedClient, request: CustomerRequest): Promise<Idempotent<CreatedCustomer>> {
    const write = this.writes.begin(OPERATION.createCustomer, { reference: request.reference });
    const customer: NewCustomer = { ...request, reference: write.reference };
    return write.once(
      caller,
      customer,
      async () => {
        const created = await this.gateway.create(customer);
        const owner = await this.ownership.assign(created.customerId, caller.tenant, 'created');
        if (owner !== caller.tenant) {
          // The provider handed out an id another tenant holds: keep the other tenant's claim.
          this.logger.error({ reference: write.reference }, 'The provider returned a customer id that belongs to another tenant');
        }
        return created;
      },
      (created) => ({ customerId: created.customerId }),
    );
  }
}
