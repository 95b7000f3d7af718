import fc from 'fast-check';
import { earliestAcceptedExpiry, expiryRuleMessage, isExpiryAccepted } from './document-expiry.rule';

const at = (date: string) => new Date(`${date}T12:00:00Z`);

describe('document expiry rule', () => {
  it.each([
    ['2026-11-21', '2026-12-21'],
    ['2027-01-31', '2027-02-28'],
    ['2028-01-31', '2028-02-29'],
    ['2028-01-29', '2028-02-29'],
    ['2027-03-31', '2027-04-30'],
    ['2027-08-31', '2027-09-30'],
    ['2026-12-31', '2027-01-31'],
    ['2026-12-15', '2027-01-15'],
    ['2028-02-29', '2028-03-29'],
    ['2100-01-31', '2100-02-28'],
    ['2000-01-31', '2000-02-29'],
  ])('when today is %s, then the earliest accepted expiry is %s', (today, earliest) => {
    expect(earliestAcceptedExpiry(at(today))).toBe(earliest);
  });

  it('when the instant is late on the 31st in UTC, then today is still the 31st (UTC, not local time)', () => {
    expect(earliestAcceptedExpiry(new Date('2027-01-31T23:59:59.999Z'))).toBe('2027-02-28');
    expect(earliestAcceptedExpiry(new Date('2027-02-01T00:00:00.000Z'))).toBe('2027-03-01');
  });

  it('when the expiry is the earliest date, then it is accepted; the day before is not', () => {
    const now = at('2027-01-31');
    expect(isExpiryAccepted('2027-02-28', now)).toBe(true);
    expect(isExpiryAccepted('2027-02-27', now)).toBe(false);
  });

  it.each(['2027-02-30', '2027-13-01', '27-02-28', '2027-2-28', '2027-02-28T00:00:00Z', ''])('when the expiry is %p, then it is refused', (value) => {
    expect(isExpiryAccepted(value, at('2026-01-01'))).toBe(false);
  });

  it('when the message is built, then it names the earliest accepted date', () => {
    expect(expiryRuleMessage(at('2027-01-31'))).toContain('2027-02-28');
  });

  describe('properties', () => {
    const instants = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true });

    it('the earliest date is a real date in the next calendar month, never before the same day number', () => {
      fc.assert(
        fc.property(instants, (now) => {
          const earliest = earliestAcceptedExpiry(now);
          const [y, m, d] = earliest.split('-').map(Number);
          const expectedMonth = (now.getUTCMonth() + 1) % 12;
          expect(m - 1).toBe(expectedMonth);
          expect(y).toBe(now.getUTCFullYear() + (now.getUTCMonth() === 11 ? 1 : 0));
          expect(d).toBeLessThanOrEqual(now.getUTCDate());
          expect(new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10)).toBe(earliest);
          // Clamped only when the day does not exist next month.
          if (d < now.getUTCDate()) expect(new Date(Date.UTC(y, m - 1, d + 1)).getUTCMonth()).not.toBe(m - 1);
        }),
      );
    });

    it('the rule splits the calendar at the earliest date: everything before is refused, from it on accepted', () => {
      fc.assert(
        fc.property(instants, fc.integer({ min: -400, max: 400 }), (now, offsetDays) => {
          const earliest = earliestAcceptedExpiry(now);
          const candidate = new Date(Date.parse(`${earliest}T00:00:00Z`) + offsetDays * 86_400_000).toISOString().slice(0, 10);
          expect(isExpiryAccepted(candidate, now)).toBe(offsetDays >= 0);
        }),
      );
    });

    it('the earliest date never moves backwards as time moves forwards', () => {
      fc.assert(
        fc.property(instants, fc.integer({ min: 0, max: 86_400_000 * 60 }), (now, laterMs) => {
          const later = new Date(now.getTime() + laterMs);
          expect(earliestAcceptedExpiry(later) >= earliestAcceptedExpiry(now)).toBe(true);
        }),
      );
    });
  });
});
