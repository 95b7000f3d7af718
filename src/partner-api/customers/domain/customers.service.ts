import { Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { currentRecord, logContextOf } from '../../../common/domain/request-record';
import { Idempotent } from '../../../idempotency/domain/idempotency.service';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import { CreatedCustomer, CustomerGateway, NewCustomer } from './customer.gateway.port';
import { CustomerOwnership } from './customer-ownership.port';
import { CustomerAlreadyBound, CustomerNotFound } from './customers.errors';
import { CustomerDirectory, CustomerRecord } from './customer-directory.port';
import { CustomerTenancy } from './customer-tenancy.service';
import { decodeCursor, encodeCursor, InvalidRange, isEmptyRange } from '../../../common/domain/list-cursor';
import { isUuid } from '../../../common/domain/identifiers';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';

/** What the customers slice's requests are audited as (`audit_events.operation`): each name written once, here. */
export const CUSTOMER_OPERATIONS = {
  create: 'customer.create',
  link: 'customer.link',
  bind: 'customer.bind',
  read: 'customer.read',
  list: 'customer.list',
} as const;

/** What an end user's access token must grant to call them (docs/security.md, "End users"). */
export const CUSTOMER_SCOPES = { create: 'customers:write', read: 'customers:read' } as const;

export interface CustomerListing {
  readonly customers: readonly CustomerRecord[];
  readonly nextCursor?: string;
}

export type CustomerRequest = Omit<NewCustomer, 'reference'> & { readonly reference?: string };

@Injectable()
export class CustomersService {
  private readonly logger = new Logger('Customers');

  constructor(
    private readonly gateway: CustomerGateway,
    private readonly ownership: CustomerOwnership,
    private readonly writes: ProviderWrites,
    private readonly audit: AuditTrail,
    private readonly directory: CustomerDirectory,
    private readonly tenancy: CustomerTenancy,
  ) {}

  /** One of the caller's customers. @throws CustomerNotFound for anyone else's. */
  async read(caller: AuthenticatedClient, customerId: string): Promise<CustomerRecord> {
    this.audit.about({ customerId });
    await this.tenancy.assertVisibleTo(caller, customerId);
    const customer = await this.directory.find(customerId);
    if (!customer) throw new CustomerNotFound();
    return customer;
  }

  /** The caller's tenant's customers (an end user: their own), newest first, a page at a time. */
  async list(caller: AuthenticatedClient, range: { from?: string; to?: string }, limit: number, cursor?: string): Promise<CustomerListing> {
    if (isEmptyRange(range)) throw new InvalidRange();
    const after = cursor === undefined ? undefined : decodeCursor(cursor, isUuid);
    const page = await this.directory.list({ ...range, tenant: caller.tenant, ...(caller.role === 'end_user' ? { endUser: caller.id } : {}) }, limit, after);
    return { customers: page.customers, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  }

  /**
   * Binds one of the partner's customers to one of its end users (their pseudonym), once: from then
   * on that end user reaches it too. Partner servers only.
   * @throws CustomerNotFound (not the tenant's), CustomerAlreadyBound (another end user's).
   */
  async bind(caller: AuthenticatedClient, customerId: string, endUser: string): Promise<'bound' | 'unchanged'> {
    this.audit.about({ customerId });
    const binding = await this.ownership.bind(customerId, caller.tenant, endUser, { requestId: currentRecord().requestId });
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
      settle: async (created, recordedBy) => {
        const owner = await this.ownership.assign(
          created.customerId,
          caller.tenant,
          'created',
          caller.role === 'end_user' ? caller.id : undefined,
          { reference: created.reference, country: request.country },
          recordedBy,
        );
        if (owner !== caller.tenant) {
          // The provider handed out an id another tenant holds: keep the other tenant's claim.
          this.logger.error({ ...logContext, reference: write.reference }, 'The provider returned a customer id that belongs to another tenant');
        }
      },
    });
  }
}
