/**
 * One ERP, one budget, whatever its name (`core/limits-check.ts`, docs/guide/limits.md): an
 * `ERP_TARGET_LIMITS` entry keyed by an IP address binds a call whose host name resolves to it.
 * Over the embedded store, with a DNS of the test's own: which entries a call counts against, the
 * address its connections are pinned to, that the lookup goes through the target policy, that a
 * name that does not resolve counts by name only, and that nothing is looked up when no entry
 * names an address (or the call names an address itself).
 */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import type { CallerIdentity } from '../../lambdas/core/inbound-call.ts';
import { admitCall, erpLookupFor, type LimitsDeps } from '../../lambdas/core/limits-check.ts';
import { factsOf } from '../../lambdas/core/request-facts.ts';
import { RateLimitedError, TargetRefusedError } from '../../lambdas/platform/errors.ts';
import { parseTargetLimits, type TargetLimits } from '../../lambdas/platform/limits.ts';
import type { StateStore } from '../../lambdas/platform/state/state-store.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';
import {
  type BaseLookup,
  compileTargetPolicy,
  createPolicyLookup,
} from '../../lambdas/upstream/target-policy.ts';

const T0 = Date.UTC(2026, 10, 28, 10, 0, 0, 250);
const ERP = new URL('http://erp.example.com:8069');
const BUDGET = { defaultTimeoutSeconds: 15, maxTimeoutSeconds: 25 };

function targets(raw: unknown): TargetLimits {
  const parsed = parseTargetLimits(raw);
  if (!('value' in parsed)) throw new Error(String(parsed.problem));
  return parsed.value;
}

const caller = (name: string) => ({
  identity: { kind: 'key', name } as CallerIdentity,
  keyPolicy: undefined,
});

/** A DNS of the test's own, under the target policy: each name's addresses (in order), or none. */
function fakeDns(
  answers: Readonly<Record<string, readonly string[]>>,
): BaseLookup & { readonly asked: string[] } {
  const asked: string[] = [];
  const lookup: BaseLookup = (hostname, _options, callback) => {
    asked.push(hostname);
    // As DNS reads a name: a trailing dot (the root) changes nothing.
    const addresses = answers[hostname.replace(/\.$/, '')];
    setImmediate(() => {
      if (addresses === undefined) {
        const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        notFound.code = 'ENOTFOUND';
        callback(notFound, []);
        return;
      }
      callback(
        null,
        addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    });
  };
  return Object.assign(lookup, { asked });
}

/** The limits' dependencies as the runtime builds them (handlers/runtime-state.ts), over `dns`. */
function depsWith(
  store: StateStore,
  limits: TargetLimits,
  dns: BaseLookup,
  allowedTargets: readonly string[] = ['127.0.0.0/8', '::1/128', '10.0.0.0/8'],
): LimitsDeps {
  const policy = compileTargetPolicy({ allowedTargets, allowedDatabases: [] });
  const lookup = erpLookupFor(limits, createPolicyLookup(policy, dns), BUDGET);
  return { store, targetLimits: limits, now: () => T0, ...(lookup === undefined ? {} : { lookup }) };
}

async function refusalOf(promise: Promise<unknown>): Promise<RateLimitedError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof RateLimitedError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe('an ERP limited by address, reached by a host name', () => {
  it('counts the name against the entry of the address it resolves to, and pins its connections there', async () => {
    const dns = fakeDns({ 'erp.example.com': ['10.0.0.5'] });
    const deps = depsWith(
      new EmbeddedStateStore(),
      targets({ '10.0.0.5': { requests: 1, per: 'day' } }),
      dns,
    );
    const admission = await admitCall(deps, caller('a'), ERP, 1000);
    expect(admission?.pinned?.connectTo).toEqual({
      hostname: 'erp.example.com',
      address: { address: '10.0.0.5', family: 4 },
    });
    expect(admission?.headers).toEqual({
      'RateLimit-Policy': '"erp-address-day";q=1;w=86400',
      RateLimit: '"erp-address-day";r=0;t=50400',
    });
    // Its day is used up, by the address itself or by any name that resolves to it.
    const byAddress = await refusalOf(admitCall(deps, caller('b'), new URL('http://10.0.0.5:8069'), 1000));
    expect(byAddress.message).toContain("the ERP 10.0.0.5's limit of 1 call per day is used up");
    const byName = await refusalOf(admitCall(deps, caller('b'), new URL('http://ERP.example.com.'), 1000));
    // The refusal names the name the caller used, never the address; the log line names the entry.
    expect(byName.message).toBe(
      'Rate limited: the limit of 1 call per day of the address erp.example.com resolves to is used up; retry after 50400 s. The call did not run.',
    );
    expect(factsOf(byName)).toEqual({ limitRule: 'erp_day', limitHost: '10.0.0.5' });
    expect(dns.asked).toEqual(['erp.example.com', 'erp.example.com.']);
  });

  it("holds the address's in-flight cap across its spellings and the names that resolve to it", async () => {
    const dns = fakeDns({ 'erp.example.com': ['::ffff:10.0.0.5'], 'alias.example.com': ['10.0.0.5'] });
    const deps = depsWith(new EmbeddedStateStore(), targets({ '[::ffff:a00:5]': { in_flight: 1 } }), dns);
    const held = await admitCall(deps, caller('a'), ERP, 5_000);
    expect(held?.pinned?.connectTo).toMatchObject({ address: { address: '::ffff:10.0.0.5' } });
    for (const url of ['http://alias.example.com', 'http://10.0.0.5', 'http://[64:ff9b::a00:5]']) {
      const busy = await refusalOf(admitCall(deps, caller('b'), new URL(url), 5_000));
      expect(busy.rule).toBe('erp_in_flight');
      expect(factsOf(busy)).toEqual({ limitRule: 'erp_in_flight', limitHost: '10.0.0.5' });
    }
    const busy = await refusalOf(admitCall(deps, caller('b'), new URL('http://alias.example.com'), 5_000));
    expect(busy.message).toBe(
      'The ERP at the address alias.example.com resolves to is busy: it has 1 call in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
    );
    await held?.release();
    expect(await admitCall(deps, caller('b'), new URL('http://alias.example.com'), 5_000)).toBeDefined();
  });

  it("counts a call matching entries both ways against each, and a refusal by the address's cap frees the name's slot", async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({
      'erp.example.com': { in_flight: 1, requests: 5, per: 'minute' },
      '10.0.0.5': { in_flight: 1, requests: 5, per: 'minute' },
    });
    const deps = depsWith(store, limits, fakeDns({ 'erp.example.com': ['10.0.0.5'] }));
    const first = await admitCall(deps, caller('a'), ERP, 5_000);
    expect(first?.headers['RateLimit-Policy']).toBe('"erp-minute";q=5;w=60, "erp-address-minute";q=5;w=60');
    expect(first?.headers.RateLimit).toBe('"erp-minute";r=4;t=60, "erp-address-minute";r=4;t=60');
    await first?.release();
    // The address busy (a call to it by address): the name's slot, taken first, is given back.
    const byAddress = await admitCall(deps, caller('b'), new URL('http://10.0.0.5'), 5_000);
    const busy = await refusalOf(admitCall(deps, caller('c'), ERP, 5_000));
    expect(factsOf(busy)).toEqual({ limitRule: 'erp_in_flight', limitHost: '10.0.0.5' });
    // Given back, uncounted: the name's slot is free, and neither minute counted the refusal.
    expect(busy.headers.RateLimit).toBe('"erp-minute";r=4;t=60, "erp-address-minute";r=3;t=60');
    await byAddress?.release();
    const again = await admitCall(deps, caller('c'), ERP, 5_000);
    expect(again?.headers.RateLimit).toBe('"erp-minute";r=3;t=60, "erp-address-minute";r=2;t=60');
    await again?.release();
  });

  it('picks the first keyed address of the answer, in its order, counts against it alone, and connects to it', async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({
      '10.0.0.7': { requests: 1, per: 'day' },
      '10.0.0.6': { requests: 1, per: 'day' },
    });
    const deps = depsWith(
      store,
      limits,
      fakeDns({ 'erp.example.com': ['10.0.0.5', '10.0.0.6', '10.0.0.7'] }),
    );
    const admission = await admitCall(deps, caller('a'), ERP, 1000);
    expect(admission?.pinned?.connectTo).toMatchObject({ address: { address: '10.0.0.6' } });
    // 10.0.0.7's day is untouched; 10.0.0.6's is used up.
    expect(await admitCall(deps, caller('a'), new URL('http://10.0.0.7'), 1000)).toBeDefined();
    await expect(admitCall(deps, caller('a'), new URL('http://10.0.0.6'), 1000)).rejects.toThrow(
      "the ERP 10.0.0.6's limit",
    );
  });

  it('counts by name only when no address of the answer is keyed, and pins the connection to that answer', async () => {
    const limits = targets({ 'erp.example.com': { requests: 1, per: 'day' }, '10.0.0.9': { in_flight: 1 } });
    const deps = depsWith(
      new EmbeddedStateStore(),
      limits,
      fakeDns({ 'erp.example.com': ['10.0.0.5', '::1'], 'free.example.com': ['10.0.0.5'] }),
    );
    const admission = await admitCall(deps, caller('a'), ERP, 1000);
    expect(admission?.headers['RateLimit-Policy']).toBe('"erp-day";q=1;w=86400');
    expect(admission?.pinned?.connectTo).toEqual({
      hostname: 'erp.example.com',
      addresses: [
        { address: '10.0.0.5', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    // A name no entry keys, whose answer no entry keys: no limit, no store work, still pinned.
    const free = await admitCall(deps, caller('a'), new URL('http://free.example.com'), 1000);
    expect(free).toMatchObject({ headers: {}, facts: {} });
    expect(free?.pinned?.connectTo).toMatchObject({ addresses: [{ address: '10.0.0.5' }] });
  });

  it('counts a name that does not resolve by name only, and pins its DNS failure (the connect fails as it would have)', async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({
      'gone.example.com': { requests: 1, per: 'day' },
      '10.0.0.5': { requests: 1, per: 'day' },
    });
    // Listed by name: its DNS failure stays a DNS failure (-32004 at connect), not a refusal.
    const deps = depsWith(store, limits, fakeDns({}), ['gone.example.com', '10.0.0.0/8']);
    const admission = await admitCall(deps, caller('a'), new URL('http://gone.example.com'), 1000);
    expect(admission?.headers['RateLimit-Policy']).toBe('"erp-day";q=1;w=86400');
    expect(admission?.pinned?.connectTo).toMatchObject({
      hostname: 'gone.example.com',
      failure: { code: 'ENOTFOUND' },
    });
    await expect(admitCall(deps, caller('a'), new URL('http://gone.example.com'), 1000)).rejects.toThrow(
      "the ERP gone.example.com's limit",
    );
    // The address's budget was not touched.
    expect(await admitCall(deps, caller('a'), new URL('http://10.0.0.5'), 1000)).toBeDefined();
  });

  it('refuses a name resolving to a refused address exactly as its connection would, before counting anything', async () => {
    const store = new EmbeddedStateStore();
    const limits = targets({ '10.0.0.5': { requests: 1, per: 'day' } });
    const deps = depsWith(
      store,
      limits,
      fakeDns({ 'meta.example.com': ['10.0.0.5', '169.254.169.254'], 'inside.example.com': ['192.168.1.9'] }),
    );
    const refusedBy = async (url: string) =>
      admitCall(deps, caller('a'), new URL(url), 1000).then(
        () => undefined,
        (error: unknown) => error,
      );
    const metadata = await refusedBy('http://meta.example.com');
    expect(metadata).toBeInstanceOf(TargetRefusedError);
    // The connect-time message of a name the list does not name: one refusal whatever DNS said.
    expect((metadata as TargetRefusedError).message).toBe(
      'Target meta.example.com refused: it does not resolve to an address this proxy may reach',
    );
    expect(await refusedBy('http://inside.example.com')).toBeInstanceOf(TargetRefusedError);
    // Nothing was counted: 10.0.0.5's one call of the day is still there.
    expect(await admitCall(deps, caller('a'), new URL('http://10.0.0.5'), 1000)).toBeDefined();
  });

  it("bounds the lookup by the call's time budget: no answer in time is a DNS failure, counted by name only", async () => {
    const hanging: BaseLookup = () => {};
    const limits = targets({ '10.0.0.5': { requests: 1, per: 'day' } });
    const deps = depsWith(new EmbeddedStateStore(), limits, hanging);
    // 50 ms left of the function once its 1.5 s margin is kept (the budget's floor).
    const hurried = { ...caller('a'), remainingMs: () => 1_550 };
    const started = Date.now();
    const admission = await admitCall(deps, hurried, ERP, 1000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(admission?.pinned?.connectTo).toMatchObject({ failure: { code: 'EAI_AGAIN' } });
    expect(admission?.pinned?.lookupMs).toBeGreaterThanOrEqual(40);
  });
});

describe('no lookup where none is needed', () => {
  /** A resolver that counts its questions and answers 10.0.0.5. */
  function countingDns(): BaseLookup & { readonly asked: string[] } {
    return fakeDns({ 'erp.example.com': ['10.0.0.5'], 'other.example.com': ['10.0.0.5'] });
  }

  it('resolves nothing when no entry names an IP address: the deps have no lookup at all', async () => {
    const dns = countingDns();
    const limits = targets({ 'erp.example.com': { requests: 1, per: 'day', in_flight: 1 } });
    const deps = depsWith(new EmbeddedStateStore(), limits, dns);
    expect(deps.lookup).toBeUndefined();
    expect(
      erpLookupFor(
        limits,
        createPolicyLookup(compileTargetPolicy({ allowedTargets: [], allowedDatabases: [] }), dns),
        BUDGET,
      ),
    ).toBeUndefined();
    const admission = await admitCall(deps, caller('a'), ERP, 1000);
    expect(admission?.pinned).toBeUndefined();
    await admission?.release();
    expect(await admitCall(deps, caller('a'), new URL('http://other.example.com'), 1000)).toBeUndefined();
    expect(dns.asked).toEqual([]);
  });

  it('resolves nothing for a call that names an IP address, or with no ERP limits', async () => {
    const dns = countingDns();
    const deps = depsWith(
      new EmbeddedStateStore(),
      targets({ '10.0.0.5': { requests: 9, per: 'day' } }),
      dns,
    );
    for (const url of ['http://10.0.0.5', 'http://[::ffff:10.0.0.5]', 'http://10.0.0.6', 'http://[::1]'])
      expect((await admitCall(deps, caller('a'), new URL(url), 1000))?.pinned).toBeUndefined();
    expect(depsWith(new EmbeddedStateStore(), new Map(), dns).lookup).toBeUndefined();
    expect(dns.asked).toEqual([]);
    // A host name: resolved once per call.
    await admitCall(deps, caller('a'), ERP, 1000);
    expect(dns.asked).toEqual(['erp.example.com']);
  });
});
