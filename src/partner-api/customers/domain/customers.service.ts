import { Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { currentRecord, logContextOf } from '../../../common/domain/request-record';
import { Idempotent } from '../../../idempotency/domain/idempotency.service';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import { CreatedCustomer, CustomerGateway, NewCustomer } from './customer.gateway.port';
import { CustomerOwnership } from './customer-ownership.port';
import { CustomerAlreadyBound } from './customers.errors';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';

/** What the customers slice's requests are audited as (`audit_events.operation`): each name written once, here. */
export const CUSTOMER_OPERATIONS = { create: 'customer.create', link: 'customer.link', bind: 'customer.bind' } as const;

/** What an end user's access token must grant to call them (docs/security.md, "End users"). */
export const CUSTOMER_SCOPES = { create: 'customers:write' } as const;

export type CustomerRequest = Omit<NewCustomer, 'reference'> & { readonly reference?: string };

@Injectable()
export class CustomersService {
  private readonly logger = new Logger('Customers');

  constructor(
    private readonly gateway: CustomerGateway,
    private readonly ownership: CustomerOwnership,
    private readonly writes: ProviderWrites,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Binds one of the partner's customers to one of its end users (their pseudonym), once: from then
   * on that end user reaches it too. Partner servers only.
   * @throws CustomerNotFound (not the tenant's), CustomerAlreadyBound (another end user's).
   */
  async bind(caller: AuthenticatedClient, customerId: string, endUser: string): Promise<'bound' | 'unchanged'> {
    this.audit.about({ customerId });
    const binding = await this.ownership.bind(customerId, caller.tenant, endUser);
    if (binding === 'taken') throw new CustomerAlreadyBound();
    return binding;
  }

  /** Creates the customer at the provider, once per reference, and gives it to the caller's tenant (and, for an end user, to them). */
  async create(caller: AuthenticatedClient, request: CustomerRequest): Promise<Idempotent<CreatedCustomer>> {
    const write = this.writes.begin(CUSTOMER_OPERATIONS.create, { reference: request.reference });
    // Taken now: the settle may run after the request has ended (a held outcome, written late).
    const logContext = logContextOf(currentRecord());
    const customer: NewCustomer = { ...request, reference: write.reference };
    return write.once(caller, customer, () => this.gateway.create(customer), {
      about: (created) => ({ customerId: created.customerId }),
      // The customer's tenancy is part of the outcome: written with the result, or with it once the database is back.
      settle: async (created) => {
        const owner = await this.ownership.assign(created.customerId, caller.tenant, 'created', caller.role === 'end_user' ? caller.id : undefined);
        if (owner !== caller.tenant) {
          // The provider handed out an id another tenant holds: keep the other tenant's claim.
          this.logger.error({ ...logContext, reference: write.reference }, 'The provider returned a customer id that belongs to another tenant');
        }
      },
    });
  }
}
