/**
 * Validation as the provider does it, written independently of the gateway's own DTOs so that the
 * sandbox checks the gateway rather than mirroring it.
 */
export interface Problem {
  readonly field: string;
  readonly message: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Body = Record<string, unknown>;

function calendarDate(value: unknown): { y: number; m: number; d: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const probe = new Date(Date.UTC(y, m - 1, d));
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d ? { y, m, d } : undefined;
}

/** The provider's rule: the document expires at least one month after today (UTC). */
export function earliestExpiry(today: Date): string {
  const y = today.getUTCFullYear();
  const nextMonth = today.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(y, nextMonth + 1, 0)).getUTCDate();
  const date = new Date(Date.UTC(y, nextMonth, Math.min(today.getUTCDate(), lastDay)));
  return date.toISOString().slice(0, 10);
}

class Checker {
  readonly problems: Problem[] = [];
  constructor(private readonly body: Body) {}

  text(field: string, required = true, max = 255): void {
    const value = this.body[field];
    if (value === undefined || value === null || value === '') {
      if (required) this.problems.push({ field, message: `${field} is required` });
      return;
    }
    if (typeof value !== 'string' || value.length > max) this.problems.push({ field, message: `${field} must be a string of at most ${max} characters` });
  }

  pattern(field: string, regex: RegExp, what: string, required = true): void {
    const value = this.body[field];
    if (value === undefined && !required) return;
    if (typeof value !== 'string' || !regex.test(value)) this.problems.push({ field, message: `${field} must be ${what}` });
  }

  date(field: string, required = true): void {
    const value = this.body[field];
    if (value === undefined && !required) return;
    if (!calendarDate(value)) this.problems.push({ field, message: `${field} must be a real date in YYYY-MM-DD form` });
  }
}

export function checkCustomer(body: Body): Problem[] {
  const check = new Checker(body);
  check.pattern('reference', UUID, 'a UUID');
  check.text('first_name', true, 100);
  check.text('last_name', true, 100);
  check.pattern('email', /^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'an email address');
  check.pattern('phone_number', /^\+?\d{7,15}$/, 'digits with a country prefix');
  check.date('date_of_birth', false);
  check.pattern('country', /^[A-Z]{2}$/, 'a two-letter country code', false);
  return check.problems;
}

export function checkBankAccount(body: Body, today: Date): Problem[] {
  const check = new Checker(body);
  check.pattern('customer_id', UUID, 'a UUID');
  check.pattern('currency', /^(EUR|GBP)$/, 'EUR or GBP');
  check.pattern('phone_number', /^\+?\d{7,15}$/, 'digits with a country prefix');
  check.pattern('reference', UUID, 'a UUID');
  for (const field of ['document_type', 'document_number', 'issued_by', 'zip_code', 'street']) check.text(field);
  check.text('state', false);
  check.pattern('issued_country_code', /^[A-Z]{2}$/, 'a two-letter country code');
  check.pattern('country', /^[A-Z]{2}$/, 'a two-letter country code');
  check.date('issued_date');
  check.date('date_of_birth');
  check.date('expiration_date');
  const expiry = body.expiration_date;
  if (typeof expiry === 'string' && calendarDate(expiry)) {
    const earliest = earliestExpiry(today);
    if (expiry < earliest) {
      check.problems.push({ field: 'expiration_date', message: `expiration_date must be at least one month after the current date (${earliest} or later)` });
    }
  }
  return check.problems;
}
