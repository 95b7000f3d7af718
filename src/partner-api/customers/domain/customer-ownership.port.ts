import type { EventOrigin } from '../../../common/domain/event-origin';

export type OwnershipOrigin = 'created' | 'linked';

/** Who may act on a customer: its tenant's partner servers and, when it has one, its end user. */
export interface CustomerOwner {
  readonly tenant: string;
  /** The end user's pseudonym (the caller id end users are known by); undefined: partner servers only. */
  readonly endUser?: string;
}

/** What the service keeps of a customer it created, besides its tenancy: its reference and country (never personal data). */
export interface CustomerDetails {
  readonly reference?: string;
  readonly country?: string;
}

/** What binding a customer to an end user came to. */
export type Binding = 'bound' | 'unchanged' | 'taken';

/** Which tenant, and which of its end users, may see which customer (OWASP API1: object-level authorisation). */
export abstract class CustomerOwnership {
  /**
   * The customer's owner, or undefined when no tenant has it. `fresh`: read past any memory of an
   * unbound customer (a binding made on another replica a moment ago counts).
   */
  abstract ownerOf(customerId: string, options?: { fresh?: boolean }): Promise<CustomerOwner | undefined>;

  /** The tenant the customer belongs to, or undefined when no tenant has it. */
  async tenantOf(customerId: string): Promise<string | undefined> {
    return (await this.ownerOf(customerId))?.tenant;
  }

  /**
   * Records that the customer belongs to `tenant` (and to `endUser` within it, when given).
   * Resolves to the tenant that holds it afterwards: `tenant` itself, or another tenant that
   * already had it (nothing is changed then). A customer newly the tenant's makes its
   * `customer.created` event with it, naming `recordedBy`.
   */
  abstract assign(
    customerId: string,
    tenant: string,
    origin: OwnershipOrigin,
    endUser?: string,
    details?: CustomerDetails,
    recordedBy?: EventOrigin,
  ): Promise<string>;

  /**
   * Binds a customer of `tenant` to one of its end users, once: `unchanged` when it already is
   * theirs, `taken` when it is another end user's (nothing changes then). A binding makes its
   * `customer.assigned` event with it, naming `recordedBy`.
   * @throws CustomerNotFound when the customer is not the tenant's.
   */
  abstract bind(customerId: string, tenant: string, endUser: string, recordedBy?: EventOrigin): Promise<Binding>;

  /** The customers of one end user of a tenant, oldest first. */
  abstract customersOf(tenant: string, endUser: string): Promise<string[]>;
}
