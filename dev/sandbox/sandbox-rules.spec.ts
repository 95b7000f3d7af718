import { ibanCheckDigits, isValidIban, newEuroIban, newSterlingAccount } from './sandbox-accounts';
import { earliestExpiry } from './sandbox-rules';

describe('sandbox accounts', () => {
  it('when given published example IBANs, then the check accepts them and rejects a changed digit', () => {
    expect(isValidIban('DE89370400440532013000')).toBe(true);
    expect(isValidIban('GB82WEST12345698765432')).toBe(true);
    expect(isValidIban('DE89370400440532013001')).toBe(false);
    expect(ibanCheckDigits('DE', '370400440532013000')).toBe('89');
  });

  it('when EUR accounts are issued, then every IBAN is German and has valid check digits', () => {
    for (let i = 0; i < 200; i++) {
      const iban = newEuroIban();
      expect(iban).toMatch(/^DE\d{20}$/);
      expect(isValidIban(iban)).toBe(true);
    }
  });

  it('when GBP accounts are issued, then they have a sort code and an 8-digit account number', () => {
    expect(newSterlingAccount()).toEqual({ sortCode: expect.stringMatching(/^\d{2}-\d{2}-\d{2}$/), accountNumber: expect.stringMatching(/^\d{8}$/) });
  });
});

describe('sandbox expiry rule', () => {
  it.each([
    ['2026-11-21', '2026-12-21'],
    ['2026-12-15', '2027-01-15'],
    ['2027-01-31', '2027-02-28'],
    ['2028-01-31', '2028-02-29'],
    ['2026-03-31', '2026-04-30'],
  ])('when today is %s, then the earliest accepted expiry is %s', (today, earliest) => {
    expect(earliestExpiry(new Date(`${today}T12:00:00Z`))).toBe(earliest);
  });
});
