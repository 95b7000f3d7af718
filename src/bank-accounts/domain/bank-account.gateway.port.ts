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
