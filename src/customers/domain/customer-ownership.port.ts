export type OwnershipOrigin = 'created' | 'linked';

/** Which tenant may see which customer (OWASP API1: object-level authorisation). */
export abstract class CustomerOwnership {
  /** The tenant the customer belongs to, or undefined when no tenant has it. */
  abstract tenantOf(customerId: string): Promise<string | undefined>;

  /**
   * Records that the customer belongs to `tenant`. Resolves to the tenant that holds it afterwards:
   * `tenant` itself, or another tenant that already had it (nothing is changed then).
   */
  abstract assign(customerId: string, tenant: string, origin: OwnershipOrigin): Promise<string>;
}
