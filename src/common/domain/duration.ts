const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** What a duration looks like, for validators and parsers alike. */
export const DURATION_PATTERN = /^([0-9]{1,7})([smhd]?)$/;
export const DURATION_RULE = 'a duration such as 90s, 5m, 2h or 30d (a bare number is seconds)';

/** `90s`, `5m`, `2h`, `30d` (or a bare number of seconds) in milliseconds; undefined when not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[(match[2] || 's') as keyof typeof UNIT_MS];
}

/** The inverse for whole units: 60000 → `60s`, 2592000000 → `30d`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}
