/**
 * `npm run bench -- --cold-start --wait-quiet <minutes>` (bench/stats.ts `waitForQuietSpell`):
 * waits for a speed reference at which the cold-start budgets are judged, up to the given time,
 * then lets the rounds run either way. A fake speed reference, pause and clock: nothing waits here.
 */
import { describe, expect, it } from 'vitest';
import { waitForQuietSpell } from '../../bench/stats.ts';

function probe(readings: readonly number[]) {
  let clock = 0;
  const pauses: number[] = [];
  let next = 0;
  return {
    pauses,
    probe: {
      speed: () => readings[Math.min(next++, readings.length - 1)] as number,
      pause: async (ms: number) => {
        pauses.push(ms);
        clock += ms;
      },
      now: () => clock,
    },
  };
}

describe('waitForQuietSpell', () => {
  it('returns at the first reading at or under the bound, having paused between readings', async () => {
    const { probe: p, pauses } = probe([180, 140, 110, 90]);
    const spell = await waitForQuietSpell({ minutes: 10, boundMs: 110, everyMs: 30_000 }, p);
    expect(spell).toEqual({ quiet: true, readings: [180, 140, 110] });
    expect(pauses).toEqual([30_000, 30_000]);
  });

  it('gives up at the deadline, not quiet, with every reading taken', async () => {
    const { probe: p, pauses } = probe([200]);
    const spell = await waitForQuietSpell({ minutes: 2, boundMs: 110, everyMs: 30_000 }, p);
    expect(spell.quiet).toBe(false);
    // Readings at 0, 30, 60, 90 and 120 s: the last at the deadline itself.
    expect(spell.readings).toEqual([200, 200, 200, 200, 200]);
    expect(pauses).toHaveLength(4);
  });

  it('never pauses past the deadline', async () => {
    const { probe: p, pauses } = probe([200]);
    const spell = await waitForQuietSpell({ minutes: 1, boundMs: 110, everyMs: 45_000 }, p);
    expect(spell.quiet).toBe(false);
    expect(pauses).toEqual([45_000, 15_000]);
  });

  it('does not wait when the machine is quiet already', async () => {
    const { probe: p, pauses } = probe([95]);
    expect(await waitForQuietSpell({ minutes: 30, boundMs: 110 }, p)).toEqual({
      quiet: true,
      readings: [95],
    });
    expect(pauses).toEqual([]);
  });
});
