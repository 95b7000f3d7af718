import type { FieldMap } from '../../../common/domain/field-map';

export const BANK_ACCOUNT_CURRENCIES = ['EUR', 'GBP'] as const;
export type BankAccountCurrency = (typeof BANK_ACCOUNT_CURRENCIES)[number];

/** The provider's bank-account payload, field for field (its table of fields). */
export interface OpenBankAccount {
  readonly customerId: string;
  readonly currency: BankAccountCurrency;
  readonly phoneNumber: string;
  readonly reference: string;
  readonly documentType: string;
  readonly documentNumber: string;
  readonly issuedCountryCode: string;
  readonly issuedBy: string;
  readonly issuedDate: string;
  readonly expirationDate: string;
  readonly country: string;
  readonly zipCode: string;
  readonly street: string;
  readonly state?: string;
  readonly dateOfBirth: string;
}

/** The provider's name of each field (its payload table), which partners send too. */
export const BANK_ACCOUNT_FIELDS = {
  customerId: 'customer_id',
  currency: 'currency',
  phoneNumber: 'phone_number',
  reference: 'reference',
  documentType: 'document_type',
  documentNumber: 'document_number',
  issuedCountryCode: 'issued_country_code',
  issuedBy: 'issued_by',
  issuedDate: 'issued_date',
  expirationDate: 'expiration_date',
  country: 'country',
  zipCode: 'zip_code',
  street: 'street',
  state: 'state',
  dateOfBirth: 'date_of_birth',
} as const satisfies FieldMap<OpenBankAccount>;

export interface BankAccount {
  readonly id: string;
  readonly customerId: string;
  readonly currency: BankAccountCurrency;
  readonly reference: string;
  readonly status: string;
  /** EUR accounts. */
  readonly iban?: string;
  /** GBP accounts. */
  readonly sortCode?: string;
  readonly accountNumber?: string;
}

export abstract class BankAccountGateway {
  /** Opens an account upstream. Throws UpstreamError (see CustomerGateway.create for the outcomes). */
  abstract open(request: OpenBankAccount): Promise<BankAccount>;
}
