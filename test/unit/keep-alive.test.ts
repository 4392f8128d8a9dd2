/**
 * The keep-alive policy without sockets: the `Keep-Alive` header, the margin, and how long an
 * ERP's observed idle close is remembered (a fake clock). The behaviour over real sockets is in
 * http-client.test.ts and test/integration/faults.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  IDLE_CLOSE_MEMORY_MS,
  KEEP_ALIVE_MARGIN_MS,
  KeepAlivePolicy,
  keepAliveTimeoutMs,
} from '../../lambdas/upstream/keep-alive.ts';

describe('keepAliveTimeoutMs', () => {
  it.each([
    ['timeout=5', 5_000],
    ['timeout=5, max=100', 5_000],
    ['max=100, timeout=5', 5_000],
    ['Timeout = 7', 7_000],
    ['timeout="3"', 3_000],
    ['timeout=0', 0],
  ])('reads %j as %i ms', (header, expected) => {
    expect(keepAliveTimeoutMs(header)).toBe(expected);
  });

  it.each([undefined, '', 'max=100', 'timeout=', 'timeout=-1', 'timeout=1.5', 'xtimeout=5'])(
    'has no timeout in %j',
    (header) => {
      expect(keepAliveTimeoutMs(header)).toBeUndefined();
    },
  );
});

describe('KeepAlivePolicy.maxIdleMs', () => {
  const origin = 'erp.example.com:443:';

  it('is the proxy idle timeout when the ERP says and shows nothing', () => {
    expect(new KeepAlivePolicy({ idleTimeoutMs: 4_000 }).maxIdleMs(origin)).toBe(4_000);
  });

  it('stays a margin short of an announced timeout, and is 0 (never reuse) under the margin', () => {
    const policy = new KeepAlivePolicy({ idleTimeoutMs: 4_000 });
    expect(policy.maxIdleMs(origin, 3_000)).toBe(3_000 - KEEP_ALIVE_MARGIN_MS);
    expect(policy.maxIdleMs(origin, 60_000)).toBe(4_000);
    expect(policy.maxIdleMs(origin, 1_000)).toBe(0);
  });

  it('stays a margin short of the shortest idle close seen, for that origin only', () => {
    const policy = new KeepAlivePolicy({ idleTimeoutMs: 4_000 });
    policy.learnIdleClose(origin, 2_500);
    policy.learnIdleClose(origin, 3_500);
    expect(policy.maxIdleMs(origin)).toBe(1_500);
    expect(policy.maxIdleMs('other.example.com:443:')).toBe(4_000);
    policy.learnIdleClose(origin, 5);
    expect(policy.maxIdleMs(origin)).toBe(0);
  });

  it(`forgets an idle close after ${IDLE_CLOSE_MEMORY_MS / 60_000} minutes`, () => {
    let now = 1_000_000;
    const policy = new KeepAlivePolicy({ idleTimeoutMs: 4_000, now: () => now });
    policy.learnIdleClose(origin, 5);
    now += IDLE_CLOSE_MEMORY_MS;
    expect(policy.maxIdleMs(origin)).toBe(0);
    now += 1;
    expect(policy.observedIdleCloseMs(origin)).toBeUndefined();
    expect(policy.maxIdleMs(origin)).toBe(4_000);
  });

  it('remembers a bounded number of origins, forgetting the oldest first', () => {
    const policy = new KeepAlivePolicy({ idleTimeoutMs: 4_000 });
    for (let i = 0; i <= 1_000; i += 1) policy.learnIdleClose(`erp-${i}:80:`, 5);
    expect(policy.observedIdleCloseMs('erp-0:80:')).toBeUndefined();
    expect(policy.observedIdleCloseMs('erp-1:80:')).toBe(5);
    expect(policy.observedIdleCloseMs('erp-1000:80:')).toBe(5);
  });
});
