/**
 * The embedded store's room (`platform/state/state-store-embedded.ts`; issue 45, item 6): one
 * caller filling its share of the records' room never refuses another caller's keyed write, never
 * stops a limit from holding, and the memory the records take stays within `LOCAL_STORE_MAX_BYTES`
 * (the store's own accounting, and the heap measured after a garbage collection).
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { Answer } from '../../lambdas/core/envelope.ts';
import { type IdempotentCall, recordOwnerOf, runOnce } from '../../lambdas/core/idempotency.ts';
import type { CallerIdentity } from '../../lambdas/core/inbound-call.ts';
import { admitCall } from '../../lambdas/core/limits-check.ts';
import { RateLimitedError } from '../../lambdas/platform/errors.ts';
import { compileKeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { parseTargetLimits, type TargetLimits } from '../../lambdas/platform/limits.ts';
import { EMBEDDED_STORE_ROOM, StoreFullError } from '../../lambdas/platform/state/state-store.ts';
import {
  EmbeddedStateStore,
  RECORD_OVERHEAD_BYTES,
} from '../../lambdas/platform/state/state-store-embedded.ts';

const T0 = Date.UTC(2026, 10, 29, 3, 0, 0, 250);
const ERP = new URL('http://erp.example.com');

const ANSWER: Answer = {
  response: {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":"a","result":7,"error":null}',
  },
  facts: { outcome: 'success' },
};

function targets(raw: unknown): TargetLimits {
  const parsed = parseTargetLimits(raw);
  if (!('value' in parsed)) throw new Error(String(parsed.problem));
  return parsed.value;
}

const call = (scope: string, key: string): IdempotentCall => ({
  key,
  scope,
  fingerprint: 'fp',
  envelopeId: 'a',
  leaseMs: 30_000,
});

/** One keyed write straight on the store: begun, then completed with `answer`. */
async function write(store: EmbeddedStateStore, owner: string, answer: Uint8Array): Promise<boolean> {
  const token = randomUUID();
  const key = randomUUID();
  try {
    await store.beginAttempt(
      {
        key,
        owner,
        fingerprint: 'fp',
        token,
        leaseUntil: T0 + 30_000,
        expiresAt: Math.floor(T0 / 1000) + 86_400,
      },
      T0,
    );
  } catch (error) {
    if (error instanceof StoreFullError) return false;
    throw error;
  }
  return store.completeAttempt(key, token, answer, Math.floor(T0 / 1000) + 86_400);
}

/** The heap and array buffers in use after a full garbage collection. */
function retainedBytes(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('the embedded store, filled by one caller', () => {
  it("serves another caller's keyed write and keeps every limit holding after one caller's 50,000 keyed writes", async () => {
    const store = new EmbeddedStateStore();
    const small = new Uint8Array(64);
    let stored = 0;
    for (let i = 0; i < 50_000; i += 1)
      if (await write(store, recordOwnerOf('key:flooder'), small)) stored += 1;
    // The flooder got its share (a quarter of the records' room, in bytes or in records), no more.
    const share = (room: number) => room / EMBEDDED_STORE_ROOM.callerShareDivisor;
    expect(stored).toBeGreaterThan(1_000);
    expect(stored).toBeLessThanOrEqual(share(EMBEDDED_STORE_ROOM.maxRecords));
    expect(store.recordsHeld.bytes).toBeLessThanOrEqual(share(EMBEDDED_STORE_ROOM.maxBytes));

    const deps = { store, ttlSeconds: 86_400, now: () => T0 };
    // Through the core: the flooder's next keyed write is refused, saying why; another's is served.
    await expect(runOnce(deps, call('key:flooder', 'one-more'), async () => ANSWER)).rejects.toMatchObject({
      code: -32004,
      httpStatus: 503,
      message: expect.stringMatching(/^The local idempotency store is full for this caller/),
    });
    let ran = 0;
    const served = await runOnce(deps, call('key:billing', 'invoice-1'), async () => {
      ran += 1;
      return ANSWER;
    });
    expect(served.facts.idempotency).toBe('recorded');
    expect(ran).toBe(1);

    // The limits: a key's rate and an ERP's in-flight cap still hold.
    const limits = { store, targetLimits: targets({ 'erp.example.com': { in_flight: 1 } }), now: () => T0 };
    const policy = compileKeyPolicy({ limits: [{ requests: 1, per: 'second' }] });
    const caller = { identity: { kind: 'key', name: 'agent' } as CallerIdentity, keyPolicy: policy };
    const other = { identity: { kind: 'key', name: 'other' } as CallerIdentity, keyPolicy: undefined };
    const held = await admitCall(limits, caller, ERP, 1000);
    expect(held?.facts).toEqual({});
    await expect(admitCall(limits, caller, ERP, 1000)).rejects.toBeInstanceOf(RateLimitedError);
    await expect(admitCall(limits, other, ERP, 1000)).rejects.toMatchObject({ rule: 'erp_in_flight' });
    await held?.release();
    expect((await admitCall(limits, other, ERP, 1000))?.facts).toEqual({});
  });

  it('keeps the memory its records take within LOCAL_STORE_MAX_BYTES, whatever the callers send', async () => {
    const maxBytes = 8 * 1024 * 1024;
    const store = new EmbeddedStateStore({ maxBytes });
    const before = retainedBytes();
    // 200 answers of 300 KB from 50 callers: 60 MB offered, each caller's share 2 MiB.
    let stored = 0;
    for (let i = 0; i < 200; i += 1) {
      if (await write(store, `caller-${i % 50}`, new Uint8Array(300 * 1024).fill(i))) stored += 1;
      expect(store.recordsHeld.bytes).toBeLessThanOrEqual(maxBytes);
    }
    const grown = retainedBytes() - before;
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(200);
    // The store's count of what it holds is not below what the heap shows (1 MiB of slack for
    // the test's own allocations).
    expect(grown).toBeLessThanOrEqual(store.recordsHeld.bytes + 1024 * 1024);
  });

  it('counts each small record at no less than it takes on the heap', async () => {
    const store = new EmbeddedStateStore({ maxRecords: 40_000 });
    const before = retainedBytes();
    const answer = new Uint8Array(16);
    for (let i = 0; i < 8_000; i += 1) expect(await write(store, 'one', answer)).toBe(true);
    const perRecord = (retainedBytes() - before) / 8_000;
    expect(perRecord).toBeLessThanOrEqual(store.recordsHeld.bytes / 8_000);
    expect(store.recordsHeld.bytes / 8_000).toBeGreaterThanOrEqual(RECORD_OVERHEAD_BYTES);
  });

  it('never refuses a counter or a slot for lack of room, and drops expired ones as they pile up', async () => {
    const store = new EmbeddedStateStore({ maxRecords: 4 });
    const second = Math.floor(T0 / 1000);
    for (let i = 0; i < 10_000; i += 1) {
      const now = T0 + i * 1000;
      const step = { key: `c${i}`, limit: 1, expiresAt: second + i };
      expect((await store.countRequest(step, now)).counted).toBe(true);
      expect(await store.acquireSlot({ key: `s${i}`, slot: 0, token: 't', leaseUntil: now + 500 }, now)).toBe(
        true,
      );
    }
    expect(store.limitsHeld).toBeLessThan(4_096);
  });
});
