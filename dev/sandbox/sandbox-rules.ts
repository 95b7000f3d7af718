import { isISO31661Alpha2 } from 'class-validator';

/**
 * Validation as the provider does it (docs/field-rules.md), written independently of the
 * gateway's own DTOs so that the sandbox checks the gateway rather than mirroring it.
 */
export interface FieldRefusal {
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
  const probe = new Date(Date.UTC(2000, m - 1, d));
  probe.setUTCFullYear(y); // Date.UTC would read years 0-99 as 1900-1999
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

/** Control characters, line separators and lone surrogates: refused in every text. */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;
const EARLIEST = '1900-01-01';

class Checker {
  readonly problems: FieldRefusal[] = [];
  constructor(private readonly body: Body) {}

  /** Printable, trimmed, with a letter or digit; the length is the string's length (UTF-16 code units). */
  text(field: string, max: number, required = true): void {
    const value = this.body[field];
    if (value === undefined || value === null || value === '') {
      if (required) this.problems.push({ field, message: `${field} is required` });
      return;
    }
    if (typeof value !== 'string' || value.length > max) {
      this.problems.push({ field, message: `${field} must be a string of at most ${max} characters` });
    } else if (UNPRINTABLE.test(value) || value.trim() !== value || !/[\p{L}\p{N}]/u.test(value)) {
      this.problems.push({ field, message: `${field} must be printable text` });
    }
  }

  country(field: string, required = true): void {
    const value = this.body[field];
    if (value === undefined && !required) return;
    if (typeof value !== 'string' || !/^[A-Z]{2}$/.test(value) || !isISO31661Alpha2(value)) {
      this.problems.push({ field, message: `${field} must be an ISO 3166-1 alpha-2 country code` });
    }
  }

  /** A real date from 1900 on, before `before` (exclusive) or, with `orEqual`, not after it. */
  dateBefore(field: string, before: string, orEqual: boolean, required = true): void {
    const value = this.body[field];
    if (value === undefined && !required) return;
    if (typeof value !== 'string' || !calendarDate(value)) return; // reported by date()
    if (value < EARLIEST || value > before || (!orEqual && value === before)) {
      this.problems.push({ field, message: `${field} is out of range` });
    }
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

const isoDate = (instant: Date) => instant.toISOString().slice(0, 10);

export function checkCustomer(body: Body, today: Date): FieldRefusal[] {
  const check = new Checker(body);
  check.pattern('reference', UUID, 'a UUID');
  check.text('first_name', 100);
  check.text('last_name', 100);
  check.pattern('email', /^[^@\s\p{Cc}]{1,200}@[^@\s\p{Cc}]+\.[^@\s\p{Cc}]+$/u, 'an email address');
  if (typeof body.email === 'string' && body.email.length > 254) check.problems.push({ field: 'email', message: 'email is too long' });
  check.pattern('phone_number', /^\+?\d{7,15}$/, 'digits with a country prefix');
  check.date('date_of_birth', false);
  check.dateBefore('date_of_birth', isoDate(today), false, false);
  check.country('country', false);
  return check.problems;
}

export function checkBankAccount(body: Body, today: Date): FieldRefusal[] {
  const check = new Checker(body);
  check.pattern('customer_id', UUID, 'a UUID');
  check.pattern('currency', /^(EUR|GBP)$/, 'EUR or GBP');
  check.pattern('phone_number', /^\+?\d{7,15}$/, 'digits with a country prefix');
  check.pattern('reference', UUID, 'a UUID');
  check.text('document_type', 50);
  check.text('document_number', 50);
  check.text('issued_by', 100);
  check.text('zip_code', 20);
  check.text('street', 200);
  check.text('state', 100, false);
  check.country('issued_country_code');
  check.country('country');
  check.date('issued_date');
  check.date('date_of_birth');
  check.date('expiration_date');
  check.dateBefore('issued_date', isoDate(today), true);
  const issued = typeof body.issued_date === 'string' && calendarDate(body.issued_date) ? body.issued_date : isoDate(today);
  check.dateBefore('date_of_birth', issued < isoDate(today) ? issued : isoDate(today), false);
  const expiry = body.expiration_date;
  if (typeof expiry === 'string' && calendarDate(expiry)) {
    const earliest = earliestExpiry(today);
    if (expiry < earliest) {
      check.problems.push({ field: 'expiration_date', message: `expiration_date must be at least one month after the current date (${earliest} or later)` });
    }
  }
  return check.problems;
}
