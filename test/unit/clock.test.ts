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

  it('counts milliseconds: a wait reads as long as performance.now() reads around it', async () => {
    // Each clock reading is bracketed by two of performance.now(), so however the process is
    // preempted, the wait on monotonicMs lies between the inner and the outer performance span.
    const before = [performance.now(), monotonicMs(), performance.now()] as const;
    await sleep(50);
    const after = [performance.now(), monotonicMs(), performance.now()] as const;
    const waited = after[1] - before[1];
    expect(waited).toBeGreaterThanOrEqual(after[0] - before[2] - 0.01);
    expect(waited).toBeLessThanOrEqual(after[2] - before[0] + 0.01);
    expect(waited).toBeGreaterThanOrEqual(49);
  });
});
