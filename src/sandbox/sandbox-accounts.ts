import { randomInt } from 'node:crypto';

function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(randomInt(10));
  return out;
}

/** ISO 13616 check digits: 98 - (BBAN + country + "00" as a number mod 97). */
export function ibanCheckDigits(country: string, bban: string): string {
  const rearranged = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const ch of rearranged) remainder = (remainder * 10 + Number(ch)) % 97;
  return String(98 - remainder).padStart(2, '0');
}

/** Valid when the whole IBAN, rearranged, is 1 mod 97. */
export function isValidIban(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban)) return false;
  const rearranged = (iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const ch of rearranged) remainder = (remainder * 10 + Number(ch)) % 97;
  return remainder === 1;
}

/** A German IBAN: 8-digit bank code, 10-digit account number. */
export function newEuroIban(): string {
  const bban = digits(18);
  return `DE${ibanCheckDigits('DE', bban)}${bban}`;
}

export function newSterlingAccount(): { sortCode: string; accountNumber: string } {
  return { sortCode: `${digits(2)}-${digits(2)}-${digits(2)}`, accountNumber: digits(8) };
}
