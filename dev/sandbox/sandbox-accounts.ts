import { createHash, randomInt } from 'node:crypto';

function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(randomInt(10));
  return out;
}

/** ISO 7064 mod 97 of an alphanumeric string, letters counted as A=10 … Z=35. */
function mod97(text: string): number {
  const digitsOnly = text.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const ch of digitsOnly) remainder = (remainder * 10 + Number(ch)) % 97;
  return remainder;
}

/** ISO 13616 check digits: 98 - (BBAN + country + "00") mod 97. */
export function ibanCheckDigits(country: string, bban: string): string {
  return String(98 - mod97(bban + country + '00')).padStart(2, '0');
}

/** Valid when the whole IBAN, rearranged, is 1 mod 97. */
export function isValidIban(iban: string): boolean {
  return /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban) && mod97(iban.slice(4) + iban.slice(0, 4)) === 1;
}

/** A German IBAN: 8-digit bank code, 10-digit account number. */
export function newEuroIban(): string {
  const bban = digits(18);
  return `DE${ibanCheckDigits('DE', bban)}${bban}`;
}

export function newSterlingAccount(): { sortCode: string; accountNumber: string } {
  return { sortCode: `${digits(2)}-${digits(2)}-${digits(2)}`, accountNumber: digits(8) };
}

/** An account's opening balance in the sandbox, in cents: fixed by its id (so a restarted sandbox shows the same), 0.00 to 9,999.99. */
export function openingBalanceCents(accountId: string): number {
  return createHash('sha256').update(accountId).digest().readUInt32BE(0) % 1_000_000;
}

/** Cents as the provider's decimal string: 1234.50. */
export function decimalOf(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const whole = Math.abs(cents);
  return `${sign}${Math.floor(whole / 100)}.${String(whole % 100).padStart(2, '0')}`;
}
