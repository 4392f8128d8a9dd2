/**
 * The limits' window arithmetic and `Retry-After` (README, "Limits"), fuzzed: every instant lies in
 * exactly one window of each period, aligned to the clock; `Retry-After` is never 0, always lands a
 * retry in a later window, and never past the first whole second after the window's end; and the
 * `limits` of a key policy and `ERP_TARGET_LIMITS` accept exactly their documented forms; an ERP
 * reached by any spelling of its address has one budget, and two addresses never share one; an
 * address of a DNS answer, in any spelling a resolver gives, matches the entry of that address in
 * any spelling, and a call to a name counts against the first keyed address of its answer alone.
 */
import type { LookupAddress } from 'node:dns';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallerIdentity } from '../../lambdas/core/inbound-call.ts';
import { admitCall } from '../../lambdas/core/limits-check.ts';
import { parseProxyKeys } from '../../lambdas/platform/config.ts';
import {
  addressHost,
  hostOfUrl,
  LIMIT_PERIODS,
  normalizeLimitHost,
  PERIOD_SECONDS,
  parseTargetLimits,
  retryAfterSeconds,
  windowOf,
} from '../../lambdas/platform/limits.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';

/** Instants from 1970 to 2200, in milliseconds. */
const instant = fc.integer({ min: 0, max: 7_258_118_400_000 });
const period = fc.constantFrom(...LIMIT_PERIODS);

describe('windows', () => {
  it('hold the instant, are one period long and start at a whole multiple of it', () => {
    fc.assert(
      fc.property(instant, period, (now, per) => {
        const { startMs, endMs } = windowOf(now, per);
        const lengthMs = PERIOD_SECONDS[per] * 1000;
        expect(startMs).toBeLessThanOrEqual(now);
        expect(now).toBeLessThan(endMs);
        expect(endMs - startMs).toBe(lengthMs);
        expect(startMs % lengthMs).toBe(0);
      }),
    );
  });

  it('are the same window for two instants exactly when they fall in the same aligned span', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -200_000_000, max: 200_000_000 }), period, (a, delta, per) => {
        const b = Math.max(0, a + delta);
        const lengthMs = PERIOD_SECONDS[per] * 1000;
        const same = Math.floor(a / lengthMs) === Math.floor(b / lengthMs);
        expect(windowOf(a, per).startMs === windowOf(b, per).startMs).toBe(same);
      }),
    );
  });
});

describe('Retry-After', () => {
  it('is a whole number of seconds, at least 1, after which the window has ended, never past the first whole second after its end', () => {
    fc.assert(
      fc.property(instant, period, (now, per) => {
        const { endMs } = windowOf(now, per);
        const seconds = retryAfterSeconds(now, endMs);
        expect(Number.isInteger(seconds)).toBe(true);
        expect(seconds).toBeGreaterThanOrEqual(1);
        // A retry after it is in a later window...
        expect(now + seconds * 1000).toBeGreaterThanOrEqual(endMs);
        expect(windowOf(now + seconds * 1000, per).startMs).toBeGreaterThanOrEqual(endMs);
        // ...and no later than needed: one second less would still be inside the window, or is 0.
        expect(seconds === 1 || now + (seconds - 1) * 1000 < endMs).toBe(true);
        expect(seconds).toBeLessThanOrEqual(PERIOD_SECONDS[per]);
      }),
    );
  });

  it('is 1 at the very end of a second, and a whole minute at the start of a minute', () => {
    expect(retryAfterSeconds(999, 1000)).toBe(1);
    expect(retryAfterSeconds(1000, 1000)).toBe(1);
    expect(retryAfterSeconds(60_000, windowOf(60_000, 'minute').endMs)).toBe(60);
    expect(retryAfterSeconds(60_001, windowOf(60_001, 'minute').endMs)).toBe(60);
    expect(retryAfterSeconds(119_000, windowOf(119_000, 'minute').endMs)).toBe(1);
  });
});

/** A key entry with `limits`, through the proxy-keys parser (the one that loads them). */
function keysWithLimits(limits: unknown): string {
  return JSON.stringify({ keys: [{ name: 'agent', key: 'agent-key-0123456789abcdef', policy: { limits } }] });
}

describe("a key policy's limits", () => {
  it('accepts every list of distinct periods with positive integer requests, and keeps it', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...LIMIT_PERIODS), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 1_000_000_000 }), { minLength: 4, maxLength: 4 }),
        (periods, counts) => {
          const limits = periods.map((per, index) => ({ requests: counts[index] as number, per }));
          const [key] = parseProxyKeys(keysWithLimits(limits));
          expect(key?.policy?.limits).toEqual(limits);
        },
      ),
    );
  });

  it('fails closed on any other value, naming the key and the field, never the key itself', () => {
    const bad = fc.oneof(
      fc.constant([]),
      fc.constant({ requests: 1, per: 'minute' }),
      fc
        .record({
          requests: fc.oneof(fc.integer({ max: 0 }), fc.double({ noInteger: true }), fc.string()),
          per: period,
        })
        .map((l) => [l]),
      fc
        .record({
          requests: fc.integer({ min: 1, max: 100 }),
          per: fc.string().filter((p) => !(LIMIT_PERIODS as readonly string[]).includes(p)),
        })
        .map((l) => [l]),
      fc
        .record({ requests: fc.integer({ min: 1, max: 100 }), per: period, extra: fc.constant(1) })
        .map((l) => [l]),
      period.map((per) => [
        { requests: 1, per },
        { requests: 2, per },
      ]),
    );
    fc.assert(
      fc.property(bad, (limits) => {
        let message = '';
        try {
          parseProxyKeys(keysWithLimits(limits));
        } catch (error) {
          message = (error as Error).message;
        }
        expect(message).toMatch(/^proxy keys: keys\.0\.policy\.limits[.\d\w]* \(key "agent"\): /);
        expect(message).not.toContain('agent-key-0123456789abcdef');
      }),
    );
  });
});

describe('ERP_TARGET_LIMITS', () => {
  const host = fc.constantFrom(
    'erp.example.com',
    'ERP.Example.com.',
    '10.0.0.5',
    '::1',
    '[fd00::1]',
    'localhost',
  );

  it('accepts an exact host or IP with any mix of requests + per and in_flight', () => {
    fc.assert(
      fc.property(
        host,
        fc.option(fc.tuple(fc.integer({ min: 1, max: 1000 }), period), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
        (name, rate, inFlight) => {
          fc.pre(rate !== undefined || inFlight !== undefined);
          const entry = {
            ...(rate ? { requests: rate[0], per: rate[1] } : {}),
            ...(inFlight ? { in_flight: inFlight } : {}),
          };
          const parsed = parseTargetLimits(JSON.stringify({ [name]: entry }));
          expect('value' in parsed).toBe(true);
          if (!('value' in parsed)) return;
          const [limit] = [...parsed.value.values()];
          expect(limit?.rate).toEqual(rate ? { requests: rate[0], per: rate[1] } : undefined);
          expect(limit?.inFlight).toBe(inFlight);
        },
      ),
    );
  });

  it('names every host the way URL writes it, so a target matches its entry', () => {
    const parsed = parseTargetLimits({
      'ERP.Example.com.': { in_flight: 2 },
      '::1': { in_flight: 1 },
      '010.0.0.5': { in_flight: 3 },
    });
    // 010 is octal to URL, as in a target URL: both are 8.0.0.5.
    expect('value' in parsed && [...parsed.value.keys()]).toEqual(['erp.example.com', '[::1]', '8.0.0.5']);
  });

  it.each([
    ['not JSON', '{'],
    ['not an object', '[1]'],
    ['a wildcard', { '*.example.com': { in_flight: 1 } }],
    ['a CIDR', { '10.0.0.0/8': { in_flight: 1 } }],
    ['a URL', { 'https://erp.example.com': { in_flight: 1 } }],
    ['a port', { 'erp.example.com:8069': { in_flight: 1 } }],
    ['an unknown field', { 'erp.example.com': { in_flight: 1, burst: 2 } }],
    ['requests without per', { 'erp.example.com': { requests: 5 } }],
    ['an unknown period', { 'erp.example.com': { requests: 5, per: 'week' } }],
    ['in_flight of 0', { 'erp.example.com': { in_flight: 0 } }],
    ['a fraction', { 'erp.example.com': { in_flight: 1.5 } }],
    ['nothing', { 'erp.example.com': {} }],
    ['one host twice', { 'erp.example.com': { in_flight: 1 }, 'ERP.example.com': { in_flight: 2 } }],
  ])('refuses %s', (_what, raw) => {
    const parsed = parseTargetLimits(raw);
    expect('problem' in parsed).toBe(true);
  });
});

describe('one ERP, one budget (docs/design.md, "Limits: protecting the ERP")', () => {
  const ipv4 = fc.integer({ min: 0, max: 0xffff_ffff });
  const dotted = (value: number): string =>
    [24, 16, 8, 0].map((shift) => String((value >>> shift) & 0xff)).join('.');
  const hex = (value: number): string => `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  /** Every IPv6 form the target policy reads as the IPv4 address `value` (docs/target-policy.md). */
  const embeddings = (value: number, suffix: number): string[] => [
    `[::ffff:${dotted(value)}]`, // IPv4-mapped
    `[::ffff:${hex(value)}]`,
    `[64:ff9b::${dotted(value)}]`, // NAT64
    `[64:ff9b::${hex(value)}]`,
    `[0:0:0:0:ffff:0:${hex(value)}]`, // SIIT
    `[2002:${hex(value)}:${suffix.toString(16)}::1]`, // 6to4: the relay's address, any site
  ];

  it('maps every embedding of a random IPv4 address to that address, in a URL and in an entry', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 0xffff }), (value, suffix) => {
        const address = dotted(value);
        for (const form of embeddings(value, suffix)) {
          expect(hostOfUrl(new URL(`http://${form}:8069/`)), form).toBe(address);
          expect(normalizeLimitHost(form), form).toBe(address);
        }
        // IPv4-compatible (`::a.b.c.d`) is the address too, except `::` and `::1`, which keep their meaning.
        if (value > 1) expect(hostOfUrl(new URL(`http://[::${dotted(value)}]/`))).toBe(address);
      }),
    );
  });

  it('never joins two distinct addresses in one budget', () => {
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 0, max: 0xffff }), (a, b, suffix) => {
        fc.pre(a !== b);
        const budgetsOfA = new Set(embeddings(a, suffix).map((form) => normalizeLimitHost(form)));
        for (const form of [dotted(b), ...embeddings(b, suffix)])
          expect(budgetsOfA.has(normalizeLimitHost(form)), form).toBe(false);
      }),
    );
  });

  it('keeps an IPv6 address that carries no IPv4 address apart from every IPv4 address', () => {
    const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(groups, (words) => {
        // Not in ::/96, ::ffff:0:0/96, ::ffff:0:0:0/96, 64:ff9b::/96 or 2002::/16.
        fc.pre(words[0] !== 0 && words[0] !== 0x64 && words[0] !== 0x2002);
        const host = normalizeLimitHost(words.map((word) => word.toString(16)).join(':'));
        expect(host?.startsWith('[')).toBe(true);
      }),
    );
  });

  it('refuses two entries that name one address, naming both', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 0xffff }), fc.nat(5), (value, suffix, pick) => {
        const other = embeddings(value, suffix)[pick] as string;
        const parsed = parseTargetLimits({ [dotted(value)]: { in_flight: 1 }, [other]: { in_flight: 2 } });
        expect('problem' in parsed && parsed.problem).toEqual([
          `${JSON.stringify(dotted(value))} and ${JSON.stringify(other)} name one ERP (${dotted(value)}), which has one budget: keep one entry`,
        ]);
      }),
    );
  });
});

describe('one ERP, one budget, whatever its name: the addresses of a DNS answer', () => {
  const ipv4 = fc.integer({ min: 0, max: 0xffff_ffff });
  const dotted = (value: number): string =>
    [24, 16, 8, 0].map((shift) => String((value >>> shift) & 0xff)).join('.');
  const hex = (value: number): string => `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  /** How a resolver, or an operator, may write the IPv4 address `value`: bare (no brackets), any case. */
  const spellings = (value: number, suffix: number): string[] => [
    dotted(value),
    `::ffff:${dotted(value)}`, // IPv4-mapped, as getaddrinfo writes it
    `::FFFF:${hex(value).toUpperCase()}`,
    `0:0:0:0:0:ffff:${hex(value)}`,
    `0000:0000:0000:0000:0000:ffff:${dotted(value)}`,
    `64:ff9b::${dotted(value)}`, // NAT64 (DNS64)
    `64:FF9B:0:0:0:0:${hex(value)}`,
    `::ffff:0:${hex(value)}`, // SIIT
    `2002:${hex(value)}:${suffix.toString(16)}::1`, // 6to4
  ];
  const bracketed = (form: string): string => (form.includes(':') ? `[${form}]` : form);

  it('matches an answer address in any spelling to the entry of that address in any spelling', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 0xffff }), fc.nat(8), fc.nat(8), (value, suffix, a, e) => {
        const forms = spellings(value, suffix);
        const answer = forms[a] as string;
        const entry = forms[e] as string;
        // The resolver's spelling, bare; the operator's, bare or in brackets.
        expect(addressHost(answer), answer).toBe(dotted(value));
        expect(normalizeLimitHost(entry), entry).toBe(addressHost(answer));
        expect(normalizeLimitHost(bracketed(entry)), entry).toBe(addressHost(answer));
      }),
    );
  });

  it('matches an IPv6 address that carries no IPv4 address in any spelling, and nothing else', () => {
    const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(groups, ipv4, (words, other) => {
        fc.pre(words[0] !== 0 && words[0] !== 0x64 && words[0] !== 0x2002);
        const full = words.map((word) => word.toString(16).padStart(4, '0')).join(':');
        const short = words.map((word) => word.toString(16)).join(':');
        const key = normalizeLimitHost(`[${short.toUpperCase()}]`);
        expect(key?.startsWith('[')).toBe(true);
        expect(addressHost(full)).toBe(key);
        expect(addressHost(short.toUpperCase())).toBe(key);
        expect(addressHost(dotted(other))).not.toBe(key);
      }),
    );
  });

  it('matches no entry with what is not an address: a scoped address, a name', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,20}){0,3}$/), (name) => {
        expect(addressHost(name)).toBeUndefined();
        expect(addressHost(`fe80::1%${name}`)).toBeUndefined();
      }),
    );
  });

  it('counts a call to a name against the first keyed address of its answer alone, and connects to it', async () => {
    const answerOf = fc.uniqueArray(ipv4, { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(
        answerOf,
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.array(fc.nat(8), { minLength: 12, maxLength: 12 }),
        async (values, keyed, forms) => {
          const written = (value: number, index: number): string =>
            spellings(value, 1)[forms[index] ?? 0] as string;
          const answer = values.map(
            (value, index): LookupAddress => ({
              address: written(value, index),
              family: index === 0 ? 4 : 6,
            }),
          );
          const entries = Object.fromEntries([
            // An address outside every answer: the limits name addresses whatever is keyed.
            ['[2001:db8::1]', { in_flight: 1 }],
            ...values.flatMap((value, index) =>
              keyed[index] ? [[bracketed(written(value, index + 6)), { requests: 1, per: 'day' }]] : [],
            ),
          ]);
          const parsed = parseTargetLimits(entries);
          if (!('value' in parsed)) throw new Error(String(parsed.problem));
          const store = new EmbeddedStateStore();
          const deps = {
            store,
            targetLimits: parsed.value,
            lookup: async () => ({ addresses: answer }),
            now: () => Date.UTC(2026, 10, 28, 10),
          };
          const caller = { identity: { kind: 'key', name: 'k' } as CallerIdentity, keyPolicy: undefined };
          const admission = await admitCall(deps, caller, new URL('http://erp.example.com'), 1000);
          const first = values.findIndex((_value, index) => keyed[index] === true);
          if (first < 0) {
            // No keyed address: nothing to count; the connection keeps to the answer.
            expect(admission?.headers).toEqual({});
            expect(admission?.pinned?.connectTo).toEqual({ hostname: 'erp.example.com', addresses: answer });
            return;
          }
          expect(admission?.pinned?.connectTo).toEqual({
            hostname: 'erp.example.com',
            address: answer[first],
          });
          expect(admission?.headers.RateLimit).toBe('"erp-address-day";r=0;t=50400');
          // Its day is used up; every other keyed address still has its own.
          for (const [index, value] of values.entries()) {
            if (!keyed[index]) continue;
            const next = admitCall(deps, caller, new URL(`http://${dotted(value)}`), 1000);
            if (index === first) await expect(next).rejects.toThrow('is used up');
            else await expect(next).resolves.toBeDefined();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
