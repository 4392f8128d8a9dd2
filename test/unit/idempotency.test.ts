/**
 * `core/idempotency.ts` over the embedded store (the same conditions as the table), on a clock of
 * its own: what no integration test can wait for.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Answer } from '../../lambdas/core/envelope.ts';
import { type IdempotentCall, runOnce } from '../../lambdas/core/idempotency.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';

const ANSWER: Answer = {
  response: {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":"a","result":7,"error":null}',
  },
  facts: { outcome: 'success' },
};

describe('runOnce', () => {
  it('never runs a call again while its first attempt runs, even past IDEMPOTENCY_TTL (a lease longer than the TTL)', async () => {
    let clock = 1_700_000_000_000;
    const deps = { store: new EmbeddedStateStore(), ttlSeconds: 60, now: () => clock };
    // ERP_MAX_TIMEOUT may be up to 900 s, IDEMPOTENCY_TTL as low as 60 s.
    const call: IdempotentCall = {
      key: 'k-1',
      scope: 'key:billing',
      fingerprint: 'fp',
      envelopeId: 'a',
      leaseMs: 300_000,
    };
    let runs = 0;
    let finish: ((answer: Answer) => void) | undefined;
    const first = runOnce(deps, call, () => {
      runs += 1;
      return new Promise<Answer>((resolve) => {
        finish = resolve;
      });
    });
    await vi.waitFor(() => expect(runs).toBe(1));
    clock += 61_000;
    const retry = runOnce(deps, call, async () => {
      runs += 1;
      return ANSWER;
    });
    await expect(retry).rejects.toMatchObject({ code: -32010 });
    // Past the lease: "outcome unknown" (the record is kept for the TTL after it), never run.
    clock += 240_000; // the lease (300 s) has just passed
    await expect(runOnce(deps, call, async () => ANSWER)).rejects.toMatchObject({ code: -32003 });
    clock += 58_000; // within the TTL counted from the end of the lease
    await expect(runOnce(deps, call, async () => ANSWER)).rejects.toMatchObject({ code: -32003 });
    expect(runs).toBe(1);
    finish?.(ANSWER);
    await first;
  });
});
