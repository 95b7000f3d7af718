import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { FixedClock, useValidationClock } from '../../../../test/support/fakes';
import { OpenBankAccountRequestDto } from './open-bank-account.request.dto';

const NOW = new Date('2027-01-31T15:00:00Z');

const valid = {
  customer_id: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44',
  currency: 'GBP',
  phone_number: '+447700900123',
  reference: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11',
  document_type: 'passport',
  document_number: 'C01X00T47',
  issued_country_code: 'GB',
  issued_by: 'HM Passport Office',
  issued_date: '2020-01-15',
  expiration_date: '2030-01-31',
  country: 'GB',
  zip_code: 'SW1A 1AA',
  street: '10 Downing Street',
  date_of_birth: '1990-12-10',
};

/** The fields the DTO refuses, as the global ValidationPipe would validate it. */
function refused(body: Record<string, unknown>): string[] {
  const dto = plainToInstance(OpenBankAccountRequestDto, body);
  return validateSync(dto, { whitelist: true, forbidNonWhitelisted: true }).map((e) => e.property);
}

describe('OpenBankAccountRequestDto', () => {
  beforeAll(() => {
    useValidationClock(new FixedClock(NOW));
  });

  it('when every field is valid, then nothing is refused', () => {
    expect(refused(valid)).toEqual([]);
  });

  it('on 2027-01-31, then 2027-02-28 is the first expiry accepted', () => {
    expect(refused({ ...valid, expiration_date: '2027-02-27' })).toEqual(['expiration_date']);
    expect(refused({ ...valid, expiration_date: '2027-02-28' })).toEqual([]);
  });

  it.each([
    ['2026-12-31', false],
    ['2027-01-31', false],
    ['2027-02-27', false],
    ['2027-02-28', true],
    ['2027-02-29', false],
    ['2027-03-01', true],
    ['2028-02-29', true],
    ['2030-01-31', true],
  ])('on 2027-01-31, when the expiry is %s, then it is accepted: %s', (expiry, accepted) => {
    expect(refused({ ...valid, expiration_date: expiry }).includes('expiration_date')).toBe(!accepted);
  });

  it('on 2027-01-31, when any real date is the expiry, then it is accepted exactly from 2027-02-28 on', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2026-01-01'), max: new Date('2029-12-31'), noInvalidDate: true }), (date) => {
        const expiry = date.toISOString().slice(0, 10);
        expect(refused({ ...valid, expiration_date: expiry }).includes('expiration_date')).toBe(expiry < '2027-02-28');
      }),
    );
  });

  it('refuses any field it does not know', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }).filter((name) => !(name in valid) && name !== 'state' && !['__proto__', 'constructor'].includes(name)),
        (name) => {
          expect(refused({ ...valid, [name]: 'x' })).toContain(name);
        },
      ),
    );
  });

  it('refuses any currency but EUR and GBP', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 5 }).filter((c) => c !== 'EUR' && c !== 'GBP'),
        (currency) => {
          expect(refused({ ...valid, currency })).toEqual(['currency']);
        },
      ),
    );
  });

  it.each([
    ['+4915123456789', true],
    ['4915123456789', true],
    ['1234567', true],
    ['+123456789012345', true],
    ['123456', false],
    ['+1234567890123456', false],
    ['+0123456789', false],
    ['++4915123456789', false],
    ['+49 151 23456789', false],
    ['+49-151-23456789', false],
    ['４９１５１２３４５６７', false],
    ['', false],
  ])('when the phone number is %j, then it is accepted: %s', (phone, accepted) => {
    expect(refused({ ...valid, phone_number: phone }).includes('phone_number')).toBe(!accepted);
  });

  it('refuses a value of any type but string in a text field', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('document_number', 'street', 'zip_code', 'issued_by'),
        fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())),
        (field, value) => {
          expect(refused({ ...valid, [field]: value })).toContain(field);
        },
      ),
    );
  });
});
