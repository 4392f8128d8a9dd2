/**
 * @module cli-time
 * The times the audit's commands take (`npm run audit-log -- list --since/--until`,
 * `verify --from/--to`): an age (`7d`: that long ago) or a date made a UTC time.
 */

const AGE = /^(\d{1,6})([smhd])$/;
const AGE_UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A `--since` or `--until` as the endpoint takes it: an age (`7d`) or a date made a UTC time,
 * anything else as written (the proxy says what it takes).
 */
export function timeParameter(name: 'since' | 'until', text: string, now: number): string {
  const age = AGE.exec(text);
  if (age !== null) {
    return new Date(now - Number(age[1]) * (AGE_UNIT_MS[age[2] as string] as number)).toISOString();
  }
  if (DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))) {
    return name === 'since' ? `${text}T00:00:00.000Z` : `${text}T23:59:59.999Z`;
  }
  return text;
}
