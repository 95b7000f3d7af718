import { randomUUID } from 'node:crypto';
import { BANK_ACCOUNT_FIELDS, OpenBankAccount } from '../../src/partner-api/bank-accounts/domain/bank-account.gateway.port';
import { toWire } from '../../src/common/domain/field-map';
import { CUSTOMER_FIELDS, NewCustomer } from '../../src/partner-api/customers/domain/customer.gateway.port';

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
  return { ...toWire(CUSTOMER_FIELDS, buildNewCustomer()), ...overrides };
}

/** The body of POST /api/v1/bank-accounts, as a partner app sends it. */
export function buildBankAccountRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...toWire(BANK_ACCOUNT_FIELDS, buildOpenBankAccount()), ...overrides };
}
