import type { FieldMap } from '../../../common/domain/field-map';

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

/** The wire name of each field: the gateway's customer body, sent on to the provider as is. */
export const CUSTOMER_FIELDS = {
  reference: 'reference',
  firstName: 'first_name',
  lastName: 'last_name',
  email: 'email',
  phoneNumber: 'phone_number',
  dateOfBirth: 'date_of_birth',
  country: 'country',
} as const satisfies FieldMap<NewCustomer>;

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
