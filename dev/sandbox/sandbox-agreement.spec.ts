import { randomUUID } from 'node:crypto';
import type { Type } from '@nestjs/common';
import fc from 'fast-check';
import { BANK_ACCOUNT_FIELDS } from '../../src/partner-api/bank-accounts/domain/bank-account.gateway.port';
import { fromWire } from '../../src/common/domain/field-map';
import type { FieldMap } from '../../src/common/domain/field-map';
import { CUSTOMER_FIELDS } from '../../src/partner-api/customers/domain/customer.gateway.port';
import { bankAccountPayload } from '../../src/partner-api/bank-accounts/provider/provider-bank-account.adapter';
import { customerPayload } from '../../src/partner-api/customers/provider/provider-customer.adapter';
import { OpenBankAccountRequestDto } from '../../src/partner-api/bank-accounts/http/open-bank-account.request.dto';
import { FixedClock, useValidationClock } from '../../test/support/fakes';
import { createValidationPipe, RequestValidationFailed } from '../../src/common/http/validation';
import { CreateCustomerRequestDto } from '../../src/partner-api/customers/http/create-customer.request.dto';
import { checkBankAccount, checkCustomer } from './sandbox-rules';

/**
 * docs/field-rules.md is one table that the gateway and the provider both follow; the sandbox is
 * the provider's stand-in. Whatever the gateway accepts (and sends on), the sandbox must accept:
 * a provider 400 is never the first place a partner learns its input was wrong.
 */
const NOW = new Date('2027-01-31T15:00:00Z');

const pipe = createValidationPipe();

/**
 * The body the provider would receive for this partner body, exactly as the gateway maps and
 * serialises it (controller, service, adapter), or undefined when validation refuses it. Anything
 * but a validation refusal (a validator that throws) fails the test.
 */
async function wireBodyFor<T extends object>(
  dto: Type,
  body: Record<string, unknown>,
  fields: FieldMap<T>,
  payload: (value: T & { reference: string }) => Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  let validated: object;
  try {
    validated = (await pipe.transform(body, { type: 'body', metatype: dto })) as object;
  } catch (error) {
    if (error instanceof RequestValidationFailed) return undefined;
    throw error;
  }
  const value = fromWire<T & { reference?: string }>(fields as FieldMap<T & { reference?: string }>, validated);
  return JSON.parse(JSON.stringify(payload({ ...value, reference: value.reference ?? randomUUID() }))) as Record<string, unknown>;
}

const bankAccountWire = (body: Record<string, unknown>) => wireBodyFor(OpenBankAccountRequestDto, body, BANK_ACCOUNT_FIELDS, bankAccountPayload);
const customerWire = (body: Record<string, unknown>) => wireBodyFor(CreateCustomerRequestDto, body, CUSTOMER_FIELDS, customerPayload);

const nasty = fc.constantFrom(
  '',
  ' ',
  '  Ada  ',
  '\u200b',
  '\u200b\u200d',
  'A\u0000',
  'A\u0007b',
  'Ada\n',
  'A\u2028',
  'A\u0085',
  '\ud800',
  '😀',
  'de',
  'DE',
  'XX',
  'ZZ',
  'gb',
  '0000-01-01',
  '1899-12-31',
  '1900-01-01',
  '2027-01-31',
  '2027-02-01',
  '2099-02-29',
  '+4915123456789',
  'a@b.c',
  '"a b"@x.com',
  'a@b',
);
/** A value for any field: a valid one, a nasty one, arbitrary text of any Unicode, null, or none at all. */
const anyValue = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 30, arbitrary: valid },
    { weight: 2, arbitrary: nasty },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 40, maxLength: 120 }) },
    { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
  );
/** No key the provider receives carries null: the gateway refuses it or leaves the field out. */
const expectNoNull = (wire: Record<string, unknown>) => expect(Object.entries(wire).filter(([, value]) => value === null || value === undefined)).toEqual([]);
const date = (min: string, max: string) =>
  fc.date({ min: new Date(`${min}T00:00:00Z`), max: new Date(`${max}T00:00:00Z`), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const name = fc.oneof(fc.constantFrom('Ada', 'Zoë', 'José-María', '王小明', 'Nguyễn Văn A'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }));

describe('Gateway and sandbox agree on field rules', () => {
  beforeAll(() => {
    useValidationClock(new FixedClock(NOW));
  });

  it('when the gateway accepts a bank-account body, then the sandbox accepts what it sends', async () => {
    const body = fc.record({
      customer_id: anyValue(fc.uuid().map((id) => id.toUpperCase())),
      currency: anyValue(fc.constantFrom('EUR', 'GBP')),
      phone_number: anyValue(fc.constantFrom('+4915123456789', '447700900123')),
      reference: anyValue(fc.uuid()),
      document_type: anyValue(name),
      document_number: anyValue(fc.constantFrom('C01X00T47', 'X 123 456')),
      issued_country_code: anyValue(fc.constantFrom('DE', 'GB', 'FR')),
      issued_by: anyValue(name),
      issued_date: anyValue(date('1980-01-01', '2027-01-31')),
      expiration_date: anyValue(date('2027-02-20', '2040-01-01')),
      country: anyValue(fc.constantFrom('DE', 'GB')),
      zip_code: anyValue(fc.constantFrom('10115', 'SW1A 1AA')),
      street: anyValue(name),
      state: anyValue(name),
      date_of_birth: anyValue(date('1900-01-01', '1979-12-31')),
    });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, async (candidate) => {
        const sent = await bankAccountWire(candidate);
        if (sent === undefined) return;
        accepted++;
        expectNoNull(sent);
        expect(checkBankAccount(sent, NOW)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
    // The property is only worth something if the gateway accepted a fair share of the bodies.
    expect(accepted).toBeGreaterThan(20);
  });

  it('when the gateway accepts a customer body, then the sandbox accepts what it sends', async () => {
    const body = fc.record({
      reference: anyValue(fc.uuid()),
      first_name: anyValue(name),
      last_name: anyValue(name),
      email: anyValue(fc.emailAddress()),
      phone_number: anyValue(fc.constantFrom('+447700900123', '4915123456789')),
      date_of_birth: anyValue(date('1899-06-01', '2027-02-10')),
      country: anyValue(fc.constantFrom('DE', 'GB')),
    });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, async (candidate) => {
        const sent = await customerWire(candidate);
        if (sent === undefined) return;
        accepted++;
        expectNoNull(sent);
        expect(checkCustomer(sent, NOW)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it.each([
    ['a lower-case country', { issued_country_code: 'de' }],
    ['a year-0 issue date', { issued_date: '0000-01-01' }],
    ['a date of birth before 1900', { date_of_birth: '1899-12-31' }],
    ['a name of 51 emoji (102 UTF-16 units, over the limit of 100)', { issued_by: '😀'.repeat(51) }],
    ['a blank name', { issued_by: '   ' }],
    ['a name of zero-width characters only', { issued_by: '\u200b\u200c' }],
    ['a NUL in a name', { issued_by: 'Stadt\u0000Berlin' }],
    ['a date of birth after the issue date', { date_of_birth: '2021-01-01', issued_date: '2020-01-15' }],
    ['an issue date in the future', { issued_date: '2027-02-01' }],
    ['a null state (optional)', { state: null }],
    ['a null date of birth (required)', { date_of_birth: null }],
  ])('when the body has %s, then the gateway refuses it', async (_what, change) => {
    const valid = {
      customer_id: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44',
      currency: 'EUR',
      phone_number: '+4915123456789',
      document_type: 'passport',
      document_number: 'C01X00T47',
      issued_country_code: 'DE',
      issued_by: 'Stadt Berlin',
      issued_date: '2020-01-15',
      expiration_date: '2030-01-31',
      country: 'DE',
      zip_code: '10115',
      street: 'Invalidenstrasse 1',
      date_of_birth: '1990-12-10',
    };

    expect(await bankAccountWire(valid)).toBeDefined();
    expect(await bankAccountWire({ ...valid, ...change })).toBeUndefined();
  });
});
