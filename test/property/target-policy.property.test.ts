import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TargetRefusedError } from '../../lambdas/errors.ts';
import {
  checkResolvedAddress,
  checkTarget,
  compileTargetPolicy,
  parseIPv6,
  parseIp,
} from '../../lambdas/upstream/target-policy.ts';

// ---------------------------------------------------------------------------------------------
// An independent reference: octets and plain numbers, no bigint, no shared code.
// ---------------------------------------------------------------------------------------------

type Octets = readonly [number, number, number, number];

const refAlwaysRefused = ([a, b]: Octets): boolean => a === 0 || (a === 169 && b === 254);

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
const firstOctet = fc.oneof(fc.constantFrom(0, 10, 100, 127, 169, 172, 192), octet);
const secondOctet = fc.oneof(fc.constantFrom(0, 15, 16, 31, 32, 63, 64, 127, 128, 168, 254, 255), octet);
const ipv4 = fc.tuple(firstOctet, secondOctet, octet, octet) as fc.Arbitrary<Octets>;

const SPECIAL_CIDRS: RefCidr[] = [
  refCidr([10, 0, 0, 0], 8),
  refCidr([172, 16, 0, 0], 12),
  refCidr([192, 168, 0, 0], 16),
  refCidr([100, 64, 0, 0], 10),
  refCidr([127, 0, 0, 0], 8),
  refCidr([169, 254, 0, 0], 16),
  refCidr([0, 0, 0, 0], 8),
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
  const group = fc.integer({ min: 0, max: 0xffff });
  const ipv6 = fc.tuple(
    fc.oneof(fc.constantFrom(0, 0xfc00, 0xfd00, 0xfe80, 0xfebf, 0xfec0, 0x2001), group),
    fc.array(group, { minLength: 7, maxLength: 7 }),
  );
  it('follows a reference on the first group (fe80::/10 always refused, fc00::/7 private, others public)', () => {
    fc.assert(
      fc.property(ipv6, ([first, rest]) => {
        const groups = [first, ...rest];
        const text = groups.map(hex).join(':');
        const isMapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
        const allZeroButLast = groups.slice(0, 7).every((g) => g === 0);
        fc.pre(!isMapped && !allZeroButLast && text !== 'fd00:ec2:0:0:0:0:0:254');
        const expected =
          first >= 0xfe80 && first <= 0xfebf
            ? 'always'
            : first >= 0xfc00 && first <= 0xfdff
              ? 'private'
              : 'public';
        const open = compileTargetPolicy({ allowedTargets: [], allowedDatabases: [] });
        const listed = compileTargetPolicy({
          allowedTargets: ['fc00::/7', 'fe80::/10'],
          allowedDatabases: [],
        });
        const outcome = (policy: typeof open): boolean => {
          try {
            checkResolvedAddress(policy, 'random.test', text);
            return false;
          } catch (error) {
            expect(error).toBeInstanceOf(TargetRefusedError);
            return true;
          }
        };
        expect(outcome(open)).toBe(expected !== 'public');
        // A non-empty list also restricts public addresses to its entries.
        expect(outcome(listed)).toBe(expected !== 'private');
      }),
      { numRuns: 1000 },
    );
  });

  it('parseIPv6 agrees with the compressed and the full form', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map(hex).join(':');
        const value = groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
        expect(parseIPv6(full)).toBe(value);
        // Compress the longest run of zeros the way URL does, and compare.
        const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        expect(parseIPv6(compressed)).toBe(value);
        const parsed = parseIp(compressed);
        expect(parsed).toBeDefined();
      }),
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
