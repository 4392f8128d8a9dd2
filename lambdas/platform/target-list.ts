/**
 * @module platform/target-list
 * The syntax of `ERP_ALLOWED_TARGETS` (docs/target-policy.md): each entry is a host name
 * (`erp.example.com`), a wildcard (`*.example.com`), or a CIDR or bare IP (`10.0.0.0/8`,
 * `fd12::/16`, `192.168.1.5`). {@link parseTargetList} sorts the entries into those three kinds
 * once, at cold start. It lives here, below every layer, because the CDK stack checks the same
 * list at synth time with this very parser: an entry the synth accepts can never fail every
 * function at cold start.
 *
 * - a host name matches that name only: case-insensitive, a trailing dot is ignored, IDN names
 *   are kept in their punycode form;
 * - a wildcard matches any subdomain at any depth (`a.example.com`, `a.b.example.com`) but not
 *   the apex `example.com`;
 * - a CIDR matches the addresses it contains. Host bits are ignored (`10.1.2.3/8` is
 *   `10.0.0.0/8`); an IPv4-mapped IPv6 CIDR with a prefix of 96 or more
 *   (`::ffff:10.0.0.0/104`) is the IPv4 CIDR it maps to (see `parseCidr`).
 */
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { type Cidr, parseCidr } from './ip-address.ts';

/** The entries of `ERP_ALLOWED_TARGETS`, sorted by kind. */
export interface TargetList {
  /** Host-name entries, lower-cased, without a trailing dot, in punycode. */
  readonly exactNames: ReadonlySet<string>;
  /** Wildcard entries as suffixes with their leading dot: `*.example.com` is `.example.com`. */
  readonly wildcardSuffixes: readonly string[];
  readonly cidrs: readonly Cidr[];
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Lower-cases a host name and drops one trailing dot (`ERP.Example.com.` is `erp.example.com`). */
export function normalizeHostName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function compileHostName(entry: string, raw: string): string {
  const fail = (why: string): never => {
    throw new Error(`Invalid ERP_ALLOWED_TARGETS entry "${raw}": ${why}`);
  };
  if (/[\s/:@?#[\]*]/.test(entry)) {
    fail('expected a host name (erp.example.com), a wildcard (*.example.com) or a CIDR (10.0.0.0/8)');
  }
  const ascii = domainToASCII(normalizeHostName(entry));
  if (ascii === '') fail('not a valid host name');
  if (isIP(ascii) !== 0) fail('not a valid IP address; write IPv4 as four decimal numbers (10.0.0.1)');
  if (ascii.length > 253 || !ascii.split('.').every((label) => LABEL.test(label)))
    fail('not a valid host name');
  return ascii;
}

/**
 * Parses the entries of `ERP_ALLOWED_TARGETS`. Throws an `Error` naming the first invalid entry
 * (`Invalid ERP_ALLOWED_TARGETS entry ...`).
 */
export function parseTargetList(entries: readonly string[]): TargetList {
  const exactNames = new Set<string>();
  const wildcardSuffixes: string[] = [];
  const cidrs: Cidr[] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') throw new Error('Invalid ERP_ALLOWED_TARGETS entry: empty');
    const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
    if (entry.includes('/') || isIP(bare) !== 0) {
      try {
        cidrs.push(parseCidr(entry));
      } catch (error) {
        throw new Error(`Invalid ERP_ALLOWED_TARGETS entry: ${(error as Error).message}`);
      }
    } else if (entry.startsWith('*.')) {
      wildcardSuffixes.push(`.${compileHostName(entry.slice(2), raw)}`);
    } else {
      exactNames.add(compileHostName(entry, raw));
    }
  }
  return { exactNames, wildcardSuffixes: Object.freeze(wildcardSuffixes), cidrs: Object.freeze(cidrs) };
}

/**
 * Whether a host name (normalized: {@link normalizeHostName}) matches a host-name entry of `list`,
 * or a wildcard entry (any subdomain, not the apex).
 */
export function listsHostName(list: TargetList, name: string): boolean {
  if (list.exactNames.has(name)) return true;
  return list.wildcardSuffixes.some((suffix) => name.length > suffix.length && name.endsWith(suffix));
}
