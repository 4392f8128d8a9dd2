/**
 * The limits' decision (`core/limits-check.ts`) over the embedded store, with a clock of the test's
 * own: which budget a call counts against, what a refusal says and carries, that a refused call
 * does not count, the in-flight slots and their leases, no store work when no limit applies, and
 * fail open when the store cannot be asked.
 */
import { describe, expect, it } from 'vitest';
import type { CallerIdentity } from '../../lambdas/core/inbound-call.ts';
import { admitCall, type LimitsDeps } from '../../lambdas/core/limits-check.ts';
import { factsOf } from '../../lambdas/core/request-facts.ts';
import { RateLimitedError } from '../../lambdas/platform/errors.ts';
import { compileKeyPolicy, type KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { parseTargetLimits, type RateLimit, type TargetLimits } from '../../lambdas/platform/limits.ts';
import type { StateStore } from '../../lambdas/platform/state/state-store.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';

/** 2026-11-28T10:00:00.250Z: a quarter of a second into a second, minute, hour and day. */
const T0 = Date.UTC(2026, 10, 28, 10, 0, 0, 250);
const ERP = new URL('http://erp.example.com:8069');
const OTHER_ERP = new URL('http://other.example.com');

function targets(raw: unknown): TargetLimits {
  const parsed = parseTargetLimits(raw);
  if (!('value' in parsed)) throw new Error(String(parsed.problem));
  return parsed.value;
}

function withLimits(...limits: RateLimit[]): KeyPolicy {
  return compileKeyPolicy({ limits });
}

function deps(store: StateStore, targetLimits: TargetLimits = new Map(), now = () => T0): LimitsDeps {
  return { store, targetLimits, now };
}

const key = (name: string, keyPolicy?: KeyPolicy) => ({
  identity: { kind: 'key', name } as CallerIdentity,
  keyPolicy,
});

async function refusalOf(promise: Promise<unknown>): Promise<RateLimitedError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof RateLimitedError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

/** A store that fails every operation, counting them. */
function failingStore(): StateStore & { readonly calls: number } {
  let calls = 0;
  const fail = async (): Promise<never> => {
    calls += 1;
    throw new Error('unreachable');
  };
  return {
    kind: 'dynamodb',
    maxAnswerBytes: 1,
    beginAttempt: fail,
    completeAttempt: fail,
    abandonAttempt: fail,
    markSent: fail,
    countRequest: fail,
    uncountRequest: fail,
    acquireSlot: fail,
    releaseSlot: fail,
    markOnce: fail,
    get calls() {
      return calls;
    },
  };
}

describe('admitCall', () => {
  it('does nothing at all when no limit applies (no store work)', async () => {
    const store = failingStore();
    const limited = deps(store, targets({ 'other.example.com': { in_flight: 1 } }));
    expect(await admitCall(limited, key('billing'), ERP, 1000)).toBeUndefined();
    expect(
      await admitCall(limited, key('billing', compileKeyPolicy({ access: 'read' })), ERP, 1000),
    ).toBeUndefined();
    expect(store.calls).toBe(0);
  });

  it("counts a key's calls per clock window and refuses the next with Retry-After to the window's end", async () => {
    const store = new EmbeddedStateStore();
    const policy = withLimits({ requests: 2, per: 'minute' });
    for (const remaining of [1, 0]) {
      const admission = await admitCall(deps(store), key('agent', policy), ERP, 1000);
      expect(admission?.headers).toEqual({
        'RateLimit-Policy': '"key-minute";q=2;w=60',
        RateLimit: `"key-minute";r=${remaining};t=60`,
      });
    }
    const refusal = await refusalOf(
      admitCall(
        deps(store, new Map(), () => T0 + 17_000),
        key('agent', policy),
        ERP,
        1000,
      ),
    );
    expect(refusal.httpStatus).toBe(429);
    expect(refusal.code).toBe(-32004);
    expect(refusal.message).toBe(
      "Rate limited: this key's limit of 2 calls per minute is used up; retry after 43 s. The call did not run.",
    );
    expect(refusal.headers).toMatchObject({ 'Retry-After': '43', RateLimit: '"key-minute";r=0;t=43' });
    expect(factsOf(refusal)).toEqual({ limitRule: 'key_minute' });
    // The next minute has its own budget; another key name has its own too.
    expect(
      await admitCall(
        deps(store, new Map(), () => T0 + 60_000),
        key('agent', policy),
        ERP,
        1000,
      ),
    ).toBeDefined();
    expect(await admitCall(deps(store), key('other', policy), ERP, 1000)).toBeDefined();
  });

  it('gives each OAuth person their own budget, whatever identity (group) they share', async () => {
    const store = new EmbeddedStateStore();
    const policy = withLimits({ requests: 1, per: 'hour' });
    const person = (subject: string) => ({
      identity: {
        kind: 'oauth',
        issuer: 'https://issuer.example',
        subject,
        entry: 'sales',
      } as CallerIdentity,
      keyPolicy: policy,
    });
    expect(await admitCall(deps(store), person('alice'), ERP, 1000)).toBeDefined();
    expect(await admitCall(deps(store), person('bob'), ERP, 1000)).toBeDefined();
    const refusal = await refusalOf(admitCall(deps(store), person('alice'), ERP, 1000));
    expect(refusal.message).toContain('your limit of 1 call per hour is used up');
    expect(refusal.rule).toBe('person_hour');
  });

  it("binds every caller to an ERP's rate, and a refused call gives back what it counted elsewhere", async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({ 'ERP.example.com': { requests: 1, per: 'second' } });
    const policy = withLimits({ requests: 5, per: 'second' });
    const first = await admitCall(deps(store, limits), key('a', policy), ERP, 1000);
    expect(first?.headers['RateLimit-Policy']).toBe('"key-second";q=5;w=1, "erp-second";q=1;w=1');
    const refusal = await refusalOf(admitCall(deps(store, limits), key('b', policy), ERP, 1000));
    expect(refusal.message).toBe(
      "Rate limited: the ERP erp.example.com's limit of 1 call per second is used up; retry after 1 s. The call did not run.",
    );
    expect(factsOf(refusal)).toEqual({ limitRule: 'erp_second', limitHost: 'erp.example.com' });
    // b's own count was given back: four more of b's calls fit its 5 per second at another ERP.
    for (let i = 0; i < 4; i += 1) await admitCall(deps(store, limits), key('b', policy), OTHER_ERP, 1000);
    await admitCall(deps(store, limits), key('b', policy), OTHER_ERP, 1000);
    await expect(admitCall(deps(store, limits), key('b', policy), OTHER_ERP, 1000)).rejects.toThrow(
      "this key's limit of 5 calls per second",
    );
  });

  it("caps the calls in flight at an ERP, frees a slot on release, and a dead holder's slot when its lease passes", async () => {
    const store = new EmbeddedStateStore();
    let now = T0;
    const capped = deps(store, targets({ 'erp.example.com': { in_flight: 2 } }), () => now);
    const one = await admitCall(capped, key('a'), ERP, 5_000);
    const two = await admitCall(capped, key('b'), ERP, 5_000);
    expect(one?.headers).toEqual({});
    const refusal = await refusalOf(admitCall(capped, key('c'), ERP, 5_000));
    expect(refusal.message).toBe(
      'The ERP erp.example.com is busy: it has 2 calls in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
    );
    expect(refusal.headers).toEqual({ 'Retry-After': '1' });
    expect(factsOf(refusal)).toEqual({ limitRule: 'erp_in_flight', limitHost: 'erp.example.com' });
    await one?.release();
    await one?.release(); // Once only: the second does nothing.
    const three = await admitCall(capped, key('c'), ERP, 5_000);
    expect(three).toBeDefined();
    await expect(admitCall(capped, key('d'), ERP, 5_000)).rejects.toThrow(RateLimitedError);
    // `two` and `three` never release (their instance died): free once their leases pass.
    now = T0 + 5_001;
    expect(await admitCall(capped, key('d'), ERP, 5_000)).toBeDefined();
    expect(two).toBeDefined();
  });

  /** Every spelling of 127.0.0.2 the target policy reads as that address (docs/target-policy.md). */
  const SPELLINGS_OF_127_0_0_2 = [
    'http://127.0.0.2:8069',
    'http://[::ffff:127.0.0.2]:8069', // IPv4-mapped
    'http://[::ffff:7f00:2]:8069',
    'http://[64:ff9b::7f00:2]:8069', // NAT64
    'http://[::127.0.0.2]:8069', // IPv4-compatible
    'http://[::ffff:0:7f00:2]:8069', // SIIT
    'http://[2002:7f00:2::1]:8069', // 6to4: the relay 127.0.0.2
    'http://0x7f.0.0.2:8069',
  ];

  it.each(SPELLINGS_OF_127_0_0_2)(
    'counts %s against the one budget of 127.0.0.2, rate and in flight',
    async (spelling) => {
      const store = new EmbeddedStateStore();
      const limits = targets({ '127.0.0.2': { requests: 2, per: 'day', in_flight: 1 } });
      const held = await admitCall(deps(store, limits), key('a'), new URL('http://127.0.0.2:8069'), 5_000);
      // Busy: the one slot is held (and the refused call's count is given back).
      const busy = await refusalOf(admitCall(deps(store, limits), key('b'), new URL(spelling), 5_000));
      expect(busy.rule).toBe('erp_in_flight');
      expect(busy.message).toContain('The ERP 127.0.0.2 is busy');
      expect(factsOf(busy)).toEqual({ limitRule: 'erp_in_flight', limitHost: '127.0.0.2' });
      await held?.release();
      await (await admitCall(deps(store, limits), key('b'), new URL(spelling), 5_000))?.release();
      // The day's two calls are used up, whatever the spelling.
      const used = await refusalOf(admitCall(deps(store, limits), key('c'), new URL(spelling), 5_000));
      expect(used.rule).toBe('erp_day');
      expect(used.message).toContain("the ERP 127.0.0.2's limit of 2 calls per day is used up");
    },
  );

  it('reads an entry written in an IPv6 form as the IPv4 address it carries', async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({ '[64:ff9b::7f00:2]': { requests: 1, per: 'day' } });
    expect([...limits.keys()]).toEqual(['127.0.0.2']);
    expect(await admitCall(deps(store, limits), key('a'), new URL('http://127.0.0.2'), 1000)).toBeDefined();
    await expect(
      admitCall(deps(store, limits), key('a'), new URL('http://[::ffff:7f00:2]'), 1000),
    ).rejects.toThrow("the ERP 127.0.0.2's limit");
  });

  it('resolves no host name without a lookup, and keeps another IPv6 address its own budget', async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({ '127.0.0.2': { requests: 1, per: 'day' }, '::1': { requests: 1, per: 'day' } });
    expect(await admitCall(deps(store, limits), key('a'), new URL('http://127.0.0.2'), 1000)).toBeDefined();
    // No lookup in these deps, so `localhost` is not resolved (no limit applies to it); the runtime
    // gives the limits one when an entry names an address (limits-check-address.test.ts).
    expect(await admitCall(deps(store, limits), key('a'), new URL('http://localhost'), 1000)).toBeUndefined();
    // ::1 carries no IPv4 address: its budget is its own.
    expect(await admitCall(deps(store, limits), key('a'), new URL('http://[::1]'), 1000)).toBeDefined();
    await expect(
      admitCall(deps(store, limits), key('a'), new URL('http://[0:0:0:0:0:0:0:1]'), 1000),
    ).rejects.toThrow("the ERP [::1]'s limit");
  });

  it('serves the call when the store cannot be asked (fail open), and says so in its facts', async () => {
    const store = failingStore();
    const limited = deps(store, targets({ 'erp.example.com': { in_flight: 1, requests: 1, per: 'day' } }));
    const admission = await admitCall(
      limited,
      key('agent', withLimits({ requests: 1, per: 'second' })),
      ERP,
      1000,
    );
    expect(admission?.facts).toEqual({ limitsFailedOpen: true });
    expect(admission?.headers).toEqual({});
    await admission?.release();
    const noStore = await admitCall(
      { store: undefined, targetLimits: limited.targetLimits },
      key('a'),
      ERP,
      1000,
    );
    expect(noStore?.facts).toEqual({ limitsFailedOpen: true });
  });

  it("reports a refused call's given-back counts as still left in its RateLimit header", async () => {
    const store = new EmbeddedStateStore();
    const policy = withLimits({ requests: 5, per: 'minute' });
    const limits = targets({ 'erp.example.com': { requests: 1, per: 'second' } });
    await admitCall(deps(store, limits), key('a', policy), ERP, 1000);
    const refusal = await refusalOf(admitCall(deps(store, limits), key('b', policy), ERP, 1000));
    // b's minute count was given back: all 5 are left; the ERP's second is used up.
    expect(refusal.headers.RateLimit).toBe('"key-minute";r=5;t=60, "erp-second";r=0;t=1');
    const capped = targets({ 'erp.example.com': { in_flight: 1 } });
    const held = await admitCall(deps(store, capped), key('c', policy), ERP, 1000);
    const full = await refusalOf(admitCall(deps(store, capped), key('d', policy), ERP, 1000));
    expect(full.headers.RateLimit).toBe('"key-minute";r=5;t=60');
    await held?.release();
  });
});
