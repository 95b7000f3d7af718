import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AuditTrail } from '../../audit/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { fingerprintOf } from '../../idempotency/domain/idempotency';
import { Idempotent, IdempotencyService } from '../../idempotency/domain/idempotency.service';
import { CreatedCustomer, CustomerGateway, NewCustomer } from './customer.gateway.port';
import { CustomerOwnership } from './customer-ownership.port';

export type CustomerRequest = Omit<NewCustomer, 'reference'> & { readonly reference?: string };

@Injectable()
export class CustomersService {
  private readonly logger = new Logger('Customers');

  constructor(
    private readonly gateway: CustomerGateway,
    private readonly ownership: CustomerOwnership,
    private readonly idempotency: IdempotencyService,
    private readonly audit: AuditTrail,
  ) {}

  /** Creates the customer at the provider, once per reference, and gives it to the caller's tenant. */
  async create(caller: AuthenticatedClient, request: CustomerRequest): Promise<Idempotent<CreatedCustomer>> {
    const reference = request.reference ?? randomUUID();
    this.audit.about({ reference });
    const customer: NewCustomer = { ...request, reference };
    const result = await this.idempotency.run(
      { clientId: caller.id, reference },
      'customer.create',
      fingerprintOf('customer.create', { ...customer }),
      async () => {
        const created = await this.audit.attempted('customer.create', { reference }, () => this.gateway.create(customer));
        const owner = await this.ownership.assign(created.customerId, caller.tenant, 'created');
        if (owner !== caller.tenant) {
          // The provider handed out an id another tenant holds: keep the other tenant's claim.
          this.logger.error({ reference }, 'The provider returned a customer id that belongs to another tenant');
        }
        return created;
      },
    );
    this.audit.about({ customerId: result.value.customerId });
    return result;
  }
}
