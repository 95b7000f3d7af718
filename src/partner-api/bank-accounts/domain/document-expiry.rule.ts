import { parseCalendarDate, utcDate } from '../../../common/domain/calendar-date';

/**
 * The provider's rule: an identity document must expire at least one calendar month after today.
 * Today is the UTC date of `now`; one month later keeps the day of the month, clamped to the last
 * day of a shorter month (2027-01-31 → 2027-02-28, 2028-01-31 → 2028-02-29).
 */
export function earliestAcceptedExpiry(now: Date): string {
  const year = now.getUTCFullYear();
  const nextMonth = now.getUTCMonth() + 1;
  const lastDayOfNextMonth = new Date(Date.UTC(year, nextMonth + 1, 0)).getUTCDate();
  return utcDate(new Date(Date.UTC(year, nextMonth, Math.min(now.getUTCDate(), lastDayOfNextMonth))));
}

/** True when `expirationDate` is a real `YYYY-MM-DD` date on or after earliestAcceptedExpiry(now). */
export function isExpiryAccepted(expirationDate: string, now: Date): boolean {
  // Zero-padded ISO dates compare correctly as strings.
  return parseCalendarDate(expirationDate) !== undefined && expirationDate >= earliestAcceptedExpiry(now);
}

export function expiryRuleMessage(now: Date): string {
  return `expiration_date must be on or after ${earliestAcceptedExpiry(now)} (one calendar month after today, UTC)`;
}
