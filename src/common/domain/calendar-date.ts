/** A date as `YYYY-MM-DD` that exists on the calendar (no 2026-02-30), or undefined. */
export function parseCalendarDate(value: unknown): { year: number; month: number; day: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const probe = new Date(Date.UTC(year, month - 1, day));
  probe.setUTCFullYear(year); // years 0–99 are not shifted to 19xx
  const exists = probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
  return exists ? { year, month, day } : undefined;
}

/** The UTC calendar date of an instant, as `YYYY-MM-DD`. */
export function utcDate(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}
