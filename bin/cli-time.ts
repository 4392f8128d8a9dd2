/**
 * @module cli-time
 * The times the operators' commands take (`npm run audit-log -- list --since/--until`,
 * `verify --from/--to`: an age, `7d`, that long ago, or a date made a UTC time; `npm run brakes --
 * set --for 30m`: a duration from now).
 */

const AGE = /^(\d{1,6})([smhd])$/;
const AGE_UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The milliseconds a duration such as `90s`, `30m`, `12h` or `7d` names; `undefined`: not one. */
export function durationMs(text: string): number | undefined {
  const age = AGE.exec(text);
  return age === null ? undefined : Number(age[1]) * (AGE_UNIT_MS[age[2] as string] as number);
}

/**
 * A `--since` or `--until` as the endpoint takes it: an age (`7d`) or a date made a UTC time,
 * anything else as written (the proxy says what it takes).
 */
export function timeParameter(name: 'since' | 'until', text: string, now: number): string {
  const age = durationMs(text);
  if (age !== undefined) return new Date(now - age).toISOString();
  if (DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))) {
    return name === 'since' ? `${text}T00:00:00.000Z` : `${text}T23:59:59.999Z`;
  }
  return text;
}
