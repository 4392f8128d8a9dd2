/**
 * Small statistics and formatting helpers shared by the benchmark modules.
 */

/** The value at quantile `q` (0..1) of `values`, by the nearest-rank method. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);
export const p99 = (values: readonly number[]): number => quantile(values, 0.99);

/** Milliseconds with a precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) < 10) return `${value.toFixed(3)} ms`;
  if (Math.abs(value) < 100) return `${value.toFixed(1)} ms`;
  return `${Math.round(value)} ms`;
}

export function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(2)} MB`;
}

/** A fixed object for {@link speedReference}: a few hundred keys of mixed JSON values. */
const REFERENCE_DOCUMENT = Array.from({ length: 60 }, (_, i) => ({
  id: i,
  name: `Partner ${i} SA`,
  email: `contact${i}@example.com`,
  active: i % 3 !== 0,
  tags: ['a', 'b', String(i)],
  score: i * 1.25,
}));

/**
 * This machine's speed right now: the median time of a fixed CPU-only workload (JSON
 * serialization and parsing of a fixed document, 2000 round trips), over 5 runs. Taken at the
 * start and at the end of a benchmark run, it tells a quiet spell of the VM from a slow one, so
 * that runs are compared knowing how fast the machine itself was.
 */
export function speedReference(): number {
  const times: number[] = [];
  let sink = 0;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    for (let i = 0; i < 2000; i++)
      sink += (JSON.parse(JSON.stringify(REFERENCE_DOCUMENT)) as unknown[]).length;
    times.push(performance.now() - started);
  }
  if (sink === 0) throw new Error('speed reference: nothing was parsed');
  return median(times);
}

/** Progress for the person waiting; stderr, so it never mixes with the table on stdout. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** What {@link waitForQuietSpell} needs: the speed reference, a pause and a clock (tests give fakes). */
export interface QuietSpellProbe {
  readonly speed: () => number;
  readonly pause: (ms: number) => Promise<void>;
  readonly now: () => number;
}

/**
 * Waits, up to `minutes`, for a spell in which the speed reference (taken every `everyMs`) is at
 * most `boundMs`: the budgets of the cold-start rows are judged only in such a run, and this VM
 * spends long stretches above it. Returns the readings taken, the last one first compared; the
 * caller runs its rounds either way (unjudged when the spell never came), saying which.
 */
export async function waitForQuietSpell(
  options: { readonly minutes: number; readonly boundMs: number; readonly everyMs?: number },
  probe: QuietSpellProbe = {
    speed: speedReference,
    pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
  },
): Promise<{ readonly quiet: boolean; readonly readings: readonly number[] }> {
  const deadline = probe.now() + options.minutes * 60_000;
  const readings: number[] = [];
  for (;;) {
    const reading = probe.speed();
    readings.push(reading);
    progress(`  speed reference ${reading.toFixed(0)} ms (waiting for ≤ ${options.boundMs} ms)`);
    if (reading <= options.boundMs) return { quiet: true, readings };
    if (probe.now() >= deadline) return { quiet: false, readings };
    await probe.pause(Math.min(options.everyMs ?? 30_000, deadline - probe.now()));
  }
}
