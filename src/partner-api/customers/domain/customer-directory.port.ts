import type { ListPosition } from '../../../common/domain/list-cursor';

/** A customer as the service knows it: its tenancy, what it was created with that the service keeps, and its accounts. */
export interface CustomerRecord {
  readonly customerId: string;
  readonly tenant: string;
  /** The end user's pseudonym; undefined: the tenant's partner servers only. */
  readonly endUser?: string;
  /** The reference it was created with; undefined for a customer linked to the tenant, or created before references were kept. */
  readonly reference?: string;
  /** The country the partner sent (ISO 3166-1 alpha-2), the only field of the customer's the service keeps (docs/security.md). */
  readonly country?: string;
  /** `created` through this service, or `linked` to the tenant by an operator. */
  readonly origin: 'created' | 'linked';
  readonly createdAt: string;
  /** Its bank accounts' ids, oldest first. */
  readonly bankAccountIds: readonly string[];
  readonly position: ListPosition;
}

export interface CustomerFilter {
  readonly tenant: string;
  /** An end user's pseudonym: only their own customers. */
  readonly endUser?: string;
  /** Instants as ISO 8601 text, read by PostgreSQL to the microsecond. */
  readonly from?: string;
  readonly to?: string;
}

export interface CustomerPage {
  readonly customers: readonly CustomerRecord[];
  readonly next?: ListPosition;
}

/** The read side of the customers the service created or was given: one, or a tenant's, a page at a time. */
export abstract class CustomerDirectory {
  /** The customer, whichever tenant holds it (the caller's rights are checked by the service); undefined when none does. */
  abstract find(customerId: string): Promise<CustomerRecord | undefined>;

  /** A page of the tenant's customers, newest first, after `after`. */
  abstract list(filter: CustomerFilter, limit: number, after?: ListPosition): Promise<CustomerPage>;
}
