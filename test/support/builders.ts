import { randomUUID } from 'node:crypto';
import type { OpenBankAccount } from '../../src/bank-accounts/domain/bank-account.gateway.port';
import type { NewCustomer } from '../../src/customers/domain/customer.gateway.port';

/** A date `months` calendar months from today (UTC), safely past the provider's one-month rule. */
export function monthsFromToday(months: number): string {
  const today = new Date();
  return new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + months, 1)).toISOString().slice(0, 10);
}

export function buildNewCustomer(overrides: Partial<NewCustomer> = {}): NewCustomer {
  return {
    reference: randomUUID(),
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phoneNumber: '+447700900123',
    dateOfBirth: '1990-12-10',
    country: 'GB',
    ...overrides,
  };
}

export function buildOpenBankAccount(overrides: Partial<OpenBankAccount> = {}): OpenBankAccount {
  return {
    customerId: randomUUID(),
    currency: 'EUR',
    phoneNumber: '+4915123456789',
    reference: randomUUID(),
    documentType: 'passport',
    documentNumber: 'C01X00T47',
    issuedCountryCode: 'DE',
    issuedBy: 'Stadt Berlin',
    issuedDate: '2020-01-15',
    expirationDate: monthsFromToday(24),
    country: 'DE',
    zipCode: '10115',
    street: 'Invalidenstrasse 1',
    state: 'Berlin',
    dateOfBirth: '1990-12-10',
    ...overrides,
  };
}

/** The body of POST /api/v1/customers, as a partner app sends it. */
export function buildCustomerRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    reference: randomUUID(),
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.com',
    phone_number: '+447700900123',
    date_of_birth: '1990-12-10',
    country: 'GB',
    ...overrides,
  };
}

/** The body of POST /api/v1/bank-accounts, as a partner app sends it. */
export function buildBankAccountRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer_id: randomUUID(),
    currency: 'EUR',
    phone_number: '+4915123456789',
    reference: randomUUID(),
    document_type: 'passport',
    document_number: 'C01X00T47',
    issued_country_code: 'DE',
    issued_by: 'Stadt Berlin',
    issued_date: '2020-01-15',
    expiration_date: monthsFromToday(24),
    country: 'DE',
    zip_code: '10115',
    street: 'Invalidenstrasse 1',
    state: 'Berlin',
    date_of_birth: '1990-12-10',
    ...overrides,
  };
}
