/** The BFF's customer body (the provider does not publish its own): see docs/decisions.md. */
export interface NewCustomer {
  readonly reference: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phoneNumber: string;
  readonly dateOfBirth?: string;
  readonly country?: string;
}

export interface CreatedCustomer {
  readonly customerId: string;
  readonly reference: string;
}

export abstract class CustomerGateway {
  /**
   * Creates the customer at the provider. Throws UpstreamError: `rejected` when the provider said
   * no, `failed` when it did not act, `unknown` when it may have (retry with the same reference).
   */
  abstract create(customer: NewCustomer): Promise<CreatedCustomer>;
}
