import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TargetRefusedError } from '../../lambdas/platform/errors.ts';
import {
  checkResolvedAddress,
  checkTarget,
  compileTargetPolicy,
} from '../../lambdas/upstream/target-policy.ts';

// ---------------------------------------------------------------------------------------------
// An independent reference: octets and plain numbers, no bigint, no shared code.
// ---------------------------------------------------------------------------------------------

type Octets = readonly [number, number, number, number];

const refAlwaysRefused = ([a, b]: Octets): boolean => a === 0 || (a === 169 && b === 254) || a >= 224;

const refPrivate = ([a, b]: Octets): boolean =>
  a === 10 ||
  a === 127 ||
  (a === 172 && b >= 16 && b <= 31) ||
  (a === 192 && b === 168) ||
  (a === 100 && b >= 64 && b <= 127);

const toNumber = ([a, b, c, d]: Octets): number => ((a * 256 + b) * 256 + c) * 256 + d;

/** A CIDR as text and as a plain-number predicate. */
interface RefCidr {
  readonly text: string;
  readonly contains: (ip: Octets) => boolean;
}

function refCidr(network: Octets, prefix: number): RefCidr {
  const size = 2 ** (32 - prefix);
  const base = Math.floor(toNumber(network) / size);
  return {
    text: `${network.join('.')}/${prefix}`,
    contains: (ip) => Math.floor(toNumber(ip) / size) === base,
  };
}

const octet = fc.integer({ min: 0, max: 255 });
/** Biased towards the interesting first octets so the special ranges are actually hit. */
const firstOctet = fc.oneof(fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 223, 224, 239, 240, 255), octet);
const secondOctet = fc.oneof(fc.constantFrom(0, 15, 16, 31, 32, 63, 64, 127, 128, 168, 254, 255), octet);
const ipv4 = fc.tuple(firstOctet, secondOctet, octet, octet) as fc.Arbitrary<Octets>;
const group = fc.integer({ min: 0, max: 0xffff });

const SPECIAL_CIDRS: RefCidr[] = [
  refCidr([10, 0, 0, 0], 8),
  refCidr([172, 16, 0, 0], 12),
  refCidr([192, 168, 0, 0], 16),
  refCidr([100, 64, 0, 0], 10),
  refCidr([127, 0, 0, 0], 8),
  refCidr([169, 254, 0, 0], 16),
  refCidr([0, 0, 0, 0], 8),
  refCidr([224, 0, 0, 0], 4),
  refCidr([240, 0, 0, 0], 4),
];
const randomCidr = fc
  .tuple(ipv4, fc.integer({ min: 0, max: 32 }))
  .map(([network, prefix]) => refCidr(network, prefix));
const cidrList = fc.array(fc.oneof(fc.constantFrom(...SPECIAL_CIDRS), randomCidr), { maxLength: 4 });
/** Host-name entries that never match the host names used below. */
const nameEntries = fc.subarray(['erp.example.com', '*.example.org', 'localhost']);

/** Refused, per the reference, for an address reached through a host name that is not listed. */
function refRefused(ip: Octets, cidrs: readonly RefCidr[], restricted: boolean): boolean {
  if (refAlwaysRefused(ip)) return true;
  const listed = cidrs.some((cidr) => cidr.contains(ip));
  if (listed) return false;
  return refPrivate(ip) || restricted;
}

const hex = (n: number): string => n.toString(16);

const EMPTY_POLICY = compileTargetPolicy({ allowedTargets: [], allowedDatabases: [] });

/**
 * The empty policy (where private and public differ) and the random one (where the list
 * restricts), each with the reference's verdict for `ip`.
 */
function policiesFor(ip: Octets, cidrs: readonly RefCidr[], names: readonly string[]) {
  const entries = [...cidrs.map((c) => c.text), ...names];
  return [
    { entries: [] as string[], policy: EMPTY_POLICY, expected: refRefused(ip, [], false) },
    {
      entries,
      policy: compileTargetPolicy({ allowedTargets: entries, allowedDatabases: [] }),
      expected: refRefused(ip, cidrs, entries.length > 0),
    },
  ];
}

/** True when `fn` throws a TargetRefusedError; any other error fails the test. */
function isRefused(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    expect(error).toBeInstanceOf(TargetRefusedError);
    return true;
  }
}

describe('target policy on random IPv4 addresses', () => {
  it('resolved addresses (dotted, and IPv4-mapped IPv6 in both notations) follow the reference', () => {
    fc.assert(
      fc.property(ipv4, cidrList, nameEntries, (ip, cidrs, names) => {
        const [a, b, c, d] = ip;
        const spellings = [
          ip.join('.'),
          `::ffff:${ip.join('.')}`,
          `::ffff:${hex(a * 256 + b)}:${hex(c * 256 + d)}`,
          `0:0:0:0:0:FFFF:${hex(a * 256 + b).toUpperCase()}:${hex(c * 256 + d)}`,
        ];
        for (const { entries, policy, expected } of policiesFor(ip, cidrs, names)) {
          for (const address of spellings) {
            const refused = isRefused(() => checkResolvedAddress(policy, 'random.test', address));
            expect(refused, `${address} with [${entries.join(', ')}]`).toBe(expected);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('literal IP URLs (dotted, decimal, hex, octal, bracketed mapped IPv6) follow the reference', () => {
    fc.assert(
      fc.property(ipv4, cidrList, nameEntries, (ip, cidrs, names) => {
        const n = toNumber(ip);
        const hosts = [
          ip.join('.'),
          String(n),
          `0x${hex(n)}`,
          ip.map((o) => `0${o.toString(8)}`).join('.'),
          `${ip[0]}.${ip[1]}.${ip[2] * 256 + ip[3]}`,
          `[::ffff:${ip.join('.')}]`,
          `[::ffff:${hex(ip[0] * 256 + ip[1])}:${hex(ip[2] * 256 + ip[3])}]`,
        ];
        for (const { entries, policy, expected } of policiesFor(ip, cidrs, names)) {
          for (const host of hosts) {
            const refused = isRefused(() => checkTarget(policy, `http://${host}:8069/jsonrpc`));
            expect(refused, `${host} with [${entries.join(', ')}]`).toBe(expected);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('IPv6 forms carrying an IPv4 address (NAT64, IPv4-compatible, SIIT, 6to4) are judged like it', () => {
    fc.assert(
      fc.property(ipv4, cidrList, nameEntries, group, group, (ip, cidrs, names, g1, g2) => {
        const [a, b, c, d] = ip;
        const high = hex(a * 256 + b);
        const low = hex(c * 256 + d);
        const dotted = ip.join('.');
        const spellings = [
          `64:ff9b::${dotted}`,
          `64:ff9b::${high}:${low}`,
          `64:FF9B:0:0:0:0:${high.toUpperCase()}:${low}`,
          `::ffff:0:${dotted}`,
          `0:0:0:0:ffff:0:${high}:${low}`,
          `2002:${high}:${low}::${hex(g1)}`,
          `2002:${high}:${low}:${hex(g1)}:${hex(g2)}:0:0:1`,
        ];
        // `::` and `::1` keep their own meaning (unspecified, loopback): judged by the IPv6 rules.
        const ownMeaning = a === 0 && b === 0 && c === 0 && d <= 1;
        if (!ownMeaning) spellings.push(`::${dotted}`, `::${high}:${low}`);
        for (const { entries, policy, expected } of policiesFor(ip, cidrs, names)) {
          for (const address of spellings) {
            const resolved = isRefused(() => checkResolvedAddress(policy, 'random.test', address));
            expect(resolved, `${address} with [${entries.join(', ')}]`).toBe(expected);
            const literal = isRefused(() => checkTarget(policy, `http://[${address}]:8069/jsonrpc`));
            expect(literal, `[${address}] with [${entries.join(', ')}]`).toBe(expected);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('an IPv6 entry containing the IPv6 form never consents to a private or refused IPv4 inside it', () => {
    const v6Entries = ['64:ff9b::/96', '::/96', '::ffff:0:0:0/96', '2002::/16', '::/0'];
    const policy = compileTargetPolicy({ allowedTargets: v6Entries, allowedDatabases: [] });
    fc.assert(
      fc.property(ipv4, (ip) => {
        const [a, b, c, d] = ip;
        fc.pre(!(a === 0 && b === 0 && c === 0 && d <= 1));
        const v4 = `${hex(a * 256 + b)}:${hex(c * 256 + d)}`;
        // Listed as IPv6 (so a public one passes the non-empty list); the IPv4 inside decides.
        const expected = refAlwaysRefused(ip) || refPrivate(ip);
        for (const address of [`64:ff9b::${v4}`, `::${v4}`, `::ffff:0:${v4}`, `2002:${v4}::1`]) {
          expect(
            isRefused(() => checkResolvedAddress(policy, 'random.test', address)),
            address,
          ).toBe(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('local-use NAT64 and Teredo are not decoded: private whatever they carry, listed by IPv6 only', () => {
    fc.assert(
      fc.property(ipv4, cidrList, group, group, (ip, cidrs, g1, g2) => {
        const [a, b, c, d] = ip;
        // Teredo: server IPv4 in bits 32-63, client IPv4 inverted in the last 32 bits.
        const teredo = `2001:0:${hex(a * 256 + b)}:${hex(c * 256 + d)}:${hex(g1)}:${hex(g2)}:${hex(
          (255 - a) * 256 + (255 - b),
        )}:${hex((255 - c) * 256 + (255 - d))}`;
        // Local-use NAT64 with a /96 prefix: the IPv4 address in the last 32 bits.
        const localNat64 = `64:ff9b:1:${hex(g1)}:${hex(g2)}::${ip.join('.')}`;
        const byV4 = compileTargetPolicy({
          allowedTargets: ['0.0.0.0/0', ...cidrs.map((cidr) => cidr.text)],
          allowedDatabases: [],
        });
        const byV6 = compileTargetPolicy({
          allowedTargets: ['2001::/32', '64:ff9b:1::/48'],
          allowedDatabases: [],
        });
        for (const address of [teredo, localNat64]) {
          expect(
            isRefused(() => checkResolvedAddress(EMPTY_POLICY, 'random.test', address)),
            address,
          ).toBe(true);
          expect(
            isRefused(() => checkResolvedAddress(byV4, 'random.test', address)),
            address,
          ).toBe(true);
          expect(
            isRefused(() => checkResolvedAddress(byV6, 'random.test', address)),
            address,
          ).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a listed host name allows any address except the always-refused ones', () => {
    fc.assert(
      fc.property(ipv4, cidrList, (ip, cidrs) => {
        const policy = compileTargetPolicy({
          allowedTargets: [...cidrs.map((c) => c.text), '*.erp.internal'],
          allowedDatabases: [],
        });
        let refused = false;
        try {
          checkResolvedAddress(policy, 'a.b.erp.internal', ip.join('.'));
        } catch {
          refused = true;
        }
        expect(refused).toBe(refAlwaysRefused(ip));
      }),
    );
  });
});

describe('target policy on random IPv6 addresses', () => {
  type RefClass = 'public' | 'private' | 'always';
  const rank: Record<RefClass, number> = { public: 0, private: 1, always: 2 };
  const stricter = (x: RefClass, y: RefClass): RefClass => (rank[x] >= rank[y] ? x : y);
  const zeros = (groups: readonly number[], from: number, to: number): boolean =>
    groups.slice(from, to).every((g) => g === 0);

  /** The class of the IPv6 address itself, from its groups. */
  function refOwnClass(g: readonly number[]): RefClass {
    const [g0 = 0, g1 = 0, g2 = 0] = g;
    if (zeros(g, 0, 7) && g[7] === 0) return 'always'; // ::
    if (zeros(g, 0, 7) && g[7] === 1) return 'private'; // ::1
    if (g.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return 'always';
    if (g0 >= 0xff00) return 'always'; // ff00::/8
    if (g0 >= 0xfe80 && g0 <= 0xfebf) return 'always'; // fe80::/10
    if (g0 >= 0xfec0 && g0 <= 0xfeff) return 'private'; // fec0::/10
    if (g0 >= 0xfc00 && g0 <= 0xfdff) return 'private'; // fc00::/7
    if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // 64:ff9b:1::/48
    if (g0 === 0x2001 && g1 === 0) return 'private'; // Teredo 2001::/32
    return 'public';
  }

  /** The IPv4 address the groups carry, as octets, for the decoded forms. */
  function refCarried(g: readonly number[]): Octets | undefined {
    const octets = (hi: number, lo: number): Octets => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
    const [g0 = 0, g1 = 0, g2 = 0, , , g5 = 0, g6 = 0, g7 = 0] = g;
    if (zeros(g, 0, 5) && g5 === 0xffff) return octets(g6, g7); // IPv4-mapped
    if (g0 === 0x64 && g1 === 0xff9b && zeros(g, 2, 6)) return octets(g6, g7); // NAT64
    if (zeros(g, 0, 4) && g[4] === 0xffff && g5 === 0) return octets(g6, g7); // SIIT
    if (zeros(g, 0, 6) && !(g6 === 0 && g7 <= 1)) return octets(g6, g7); // IPv4-compatible
    if (g0 === 0x2002) return octets(g1, g2); // 6to4
    return undefined;
  }

  const refV4Class = (ip: Octets): RefClass =>
    refAlwaysRefused(ip) ? 'always' : refPrivate(ip) ? 'private' : 'public';

  /** An IPv6 CIDR as a predicate on groups, bit by bit. */
  const refV6Cidr =
    (network: readonly number[], prefix: number) =>
    (g: readonly number[]): boolean =>
      network.every((n, i) => {
        const bits = Math.min(16, Math.max(0, prefix - 16 * i));
        const size = 2 ** (16 - bits);
        return Math.floor(n / size) === Math.floor((g[i] ?? 0) / size);
      });

  const LISTED_V6 = ['fc00::/7', 'fe80::/10', 'fec0::/10', '2001::/32', 'ff00::/8'];
  const listedV6 = [
    refV6Cidr([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
    refV6Cidr([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
    refV6Cidr([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
    refV6Cidr([0x2001, 0, 0, 0, 0, 0, 0, 0], 32),
    refV6Cidr([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
  ];
  const LISTED_V4 = refCidr([10, 0, 0, 0], 8);

  /** Refused, per the reference, with the IPv6 `listed` predicates and IPv4 `v4Cidrs` entries. */
  function refRefusedV6(
    g: readonly number[],
    listed: ReadonlyArray<(g: readonly number[]) => boolean>,
    v4Cidrs: readonly RefCidr[],
    restricted: boolean,
  ): boolean {
    const own = refOwnClass(g);
    const carried = refCarried(g);
    const inner = carried === undefined ? 'public' : refV4Class(carried);
    const kind = stricter(own, inner);
    if (kind === 'always') return true;
    const inOwn = listed.some((contains) => contains(g));
    const inCarried = carried !== undefined && v4Cidrs.some((cidr) => cidr.contains(carried));
    // Each private side needs an entry of its own family; at least one side must be listed.
    const ok = (inOwn || inCarried) && (inOwn || own === 'public') && (inCarried || inner === 'public');
    if (ok) return false;
    return kind === 'private' || restricted;
  }

  const prefixes: ReadonlyArray<readonly number[]> = [
    [],
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0xffff, 0],
    [0, 0, 0, 0, 0, 0xffff],
    [0x64, 0xff9b, 0, 0, 0, 0],
    [0x64, 0xff9b, 1],
    [0x2002],
    [0x2001, 0],
    [0xfec0],
    [0xff02],
    [0xfd00, 0xec2, 0, 0, 0, 0, 0],
  ];
  const ipv6 = fc
    .tuple(
      fc.constantFrom(...prefixes),
      fc.oneof(
        fc.constantFrom(0, 0xfc00, 0xfd00, 0xfe80, 0xfebf, 0xfec0, 0xfeff, 0xff00, 0x2001, 0x2002, 0x64),
        group,
      ),
      fc.array(fc.oneof(fc.constantFrom(0, 1, 0xa00, 0xa9fe, 0x254), group), { minLength: 8, maxLength: 8 }),
    )
    .map(([prefix, first, rest]) => {
      const tail = prefix.length === 0 ? [first, ...rest] : rest;
      return [...prefix, ...tail].slice(0, 8);
    });

  it('follows a reference (own ranges, the IPv4 address carried, IPv4 and IPv6 entries)', () => {
    const listed = compileTargetPolicy({
      allowedTargets: [...LISTED_V6, LISTED_V4.text],
      allowedDatabases: [],
    });
    fc.assert(
      fc.property(ipv6, (groups) => {
        const text = groups.map(hex).join(':');
        const outcome = (policy: typeof listed): boolean =>
          isRefused(() => checkResolvedAddress(policy, 'random.test', text));
        expect(outcome(EMPTY_POLICY), text).toBe(refRefusedV6(groups, [], [], false));
        // A non-empty list also restricts public addresses to its entries.
        expect(outcome(listed), text).toBe(refRefusedV6(groups, listedV6, [LISTED_V4], true));
        const literal = isRefused(() => checkTarget(listed, `http://[${text}]/`));
        expect(literal, `[${text}]`).toBe(refRefusedV6(groups, listedV6, [LISTED_V4], true));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('checkTarget never throws anything but TargetRefusedError', () => {
  const policies = [
    compileTargetPolicy({ allowedTargets: [], allowedDatabases: [] }),
    compileTargetPolicy({
      allowedTargets: ['127.0.0.0/8', '::1/128', 'localhost'],
      allowedDatabases: ['db'],
    }),
    compileTargetPolicy({ allowedTargets: ['*.example.com', 'erp.test'], allowedDatabases: [] }),
  ];
  const scheme = fc.constantFrom('http', 'https', 'HTTP', 'ftp', 'file', 'javascript', 'data', 'ws', '');
  const hostChars = fc.constantFrom(...'abc019.-_:[]@%/\\?#xf:ff0 \t'.split(''));
  const host = fc.oneof(
    fc.string({ unit: hostChars, maxLength: 30 }),
    fc.domain(),
    fc.ipV4(),
    fc.ipV4Extended(),
    fc.ipV6().map((v6) => `[${v6}]`),
  );
  const crafted = fc
    .tuple(
      scheme,
      fc.constantFrom('://', ':', ':/', ':///', '//'),
      fc.option(fc.string(), { nil: undefined }),
      host,
    )
    .map(([s, sep, user, h]) => `${s}${sep}${user === undefined ? '' : `${user}@`}${h}/x`);
  const anyUrl = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.webUrl(), crafted);

  it('for random strings and URLs, with and without a database', () => {
    fc.assert(
      fc.property(anyUrl, fc.option(fc.string(), { nil: undefined }), (url, db) => {
        for (const policy of policies) {
          try {
            const parsed = checkTarget(policy, url, db);
            expect(parsed).toBeInstanceOf(URL);
            expect(['http:', 'https:']).toContain(parsed.protocol);
            expect(parsed.username).toBe('');
            expect(parsed.password).toBe('');
          } catch (error) {
            expect(error).toBeInstanceOf(TargetRefusedError);
            expect((error as TargetRefusedError).code).toBe(-32008);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('never echoes a user-info password', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{8,20}$/), fc.domain(), (secret, domain) => {
        try {
          checkTarget(policies[0]!, `https://user:${secret}@${domain}/`);
          expect.unreachable('user-info must be refused');
        } catch (error) {
          expect(error).toBeInstanceOf(TargetRefusedError);
          expect((error as Error).message).not.toContain(secret);
        }
      }),
    );
  });
});
