import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIPv6, parseIp } from '../../lambdas/platform/ip-address.ts';

const hex = (n: number): string => n.toString(16);

describe('IP addresses on random IPv6 addresses', () => {
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
