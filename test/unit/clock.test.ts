/**
 * platform/clock: a monotonic clock in milliseconds (not micro- or nanoseconds), which the
 * durations and deadlines of the request log, the ERP client and the secrets client read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { monotonicMs } from '../../lambdas/platform/clock.ts';

describe('monotonicMs', () => {
  it('never goes back', () => {
    let last = monotonicMs();
    for (let i = 0; i < 1000; i++) {
      const now = monotonicMs();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });

  it('counts milliseconds: a 50 ms wait reads as what performance.now() reads, to within a few ms', async () => {
    const [fromClock, fromPerformance] = [monotonicMs(), performance.now()];
    await sleep(50);
    const clockMs = monotonicMs() - fromClock;
    const performanceMs = performance.now() - fromPerformance;
    expect(clockMs).toBeGreaterThanOrEqual(49);
    expect(Math.abs(clockMs - performanceMs)).toBeLessThan(5);
  });
});
