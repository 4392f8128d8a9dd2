/**
 * @module upstream/target-policy
 * The target policy (DESIGN.md section 7): the proxy must not be an open door into the network.
 * Every refusal is a {@link TargetRefusedError} (code -32008, HTTP 403).
 *
 * The policy is checked twice:
 *
 * 1. **Pre-flight**, {@link checkTarget}, on the URL the client sent, before any I/O:
 *    - the URL is parsed with WHATWG `URL`, which already normalizes IPv4 spellings
 *      (`http://2130706433/`, `http://0177.0.0.1/`, `http://0x7f.1/` all become `127.0.0.1`) and
 *      IPv4-mapped IPv6 (`[::ffff:169.254.169.254]` becomes `[::ffff:a9fe:a9fe]`);
 *    - only `http:` and `https:`; no user-info (`http://user:pass@host`); a non-empty host;
 *    - when `allowedDatabases` is non-empty and the call names a database (`db` is not
 *      `undefined`), `db` must be one of them (exact, case-sensitive match). `db === undefined`
 *      means "this call selects no database" (e.g. `common.version`) and is not checked: callers
 *      must pass the database whenever the call selects one;
 *    - a literal IP host (IPv4, bracketed IPv6, IPv4-mapped IPv6, an IPv6 form carrying an IPv4
 *      address such as `[64:ff9b::a00:5]`) is checked right away with the address rules below,
 *      because `net.connect` never calls `lookup` for an IP literal;
 *    - a host name, when `allowedTargets` has entries but no CIDR entry, must match a host-name
 *      entry (nothing else could allow it). When the list has a CIDR entry, a name that matches no
 *      host-name entry passes pre-flight and the resolved address decides.
 * 2. **At connect time**, {@link createPolicyLookup} wraps `dns.lookup` for the HTTP client's connections
 *    (`connect: { lookup }`) and runs {@link checkResolvedAddress} on **every** resolved
 *    address: when any one is refused, the connection fails, so a DNS answer mixing a public and a
 *    metadata address is refused. A DNS name that resolves to 169.254.169.254 is refused here.
 *
 * Address rules:
 *
 * - **Always refused**, even when listed: link-local, metadata, unspecified, multicast and
 *   reserved addresses ({@link ALWAYS_REFUSED_RANGES}: 0.0.0.0/8, 169.254.0.0/16, 224.0.0.0/4
 *   multicast, 240.0.0.0/4 reserved and broadcast, ::/128, fe80::/10, fd00:ec2::254/128,
 *   ff00::/8 multicast). An ERP speaks TCP to one host: it is never at a multicast or broadcast
 *   address, so refusing them only closes odd paths.
 * - **Private and loopback** ({@link PRIVATE_RANGES}: 10/8, 172.16/12, 192.168/16, 100.64/10
 *   CGNAT, 127/8, ::1/128, fc00::/7, fec0::/10 site-local, 64:ff9b:1::/48 local-use NAT64,
 *   2001::/32 Teredo) are refused unless listed: a CIDR entry contains the address, or the URL's
 *   host name matches a host-name entry (exact or wildcard; listing the name, e.g. `localhost` or
 *   `*.erp.internal`, is the operator's consent).
 * - **Public** addresses: allowed when `allowedTargets` is empty. When it is not empty, the
 *   target must match at least one entry: the host name matches a host-name entry, or a CIDR
 *   entry contains the address.
 *
 * IPv6 addresses that carry an IPv4 address (a NAT64 gateway, a dual-stack socket or a 6to4
 * relay turns them into a connection to that IPv4 address; on AWS a VPC Lambda behind a NAT
 * gateway with DNS64 reaches `10.0.0.5` as `[64:ff9b::a00:5]`):
 *
 * - **IPv4-mapped** `::ffff:0:0/96` (`::ffff:a.b.c.d`, `::ffff:7f00:1`) is parsed as the IPv4
 *   address it maps to ({@link parseIp} returns an IPv4 address): it IS that address.
 * - **NAT64** `64:ff9b::/96` (RFC 6052), **IPv4-compatible** `::/96` (deprecated; `::` and `::1`
 *   keep their own meaning), **SIIT** `::ffff:0:a.b.c.d` (`::ffff:0:0:0/96`) and **6to4**
 *   `2002::/16` (the relay's IPv4 address in bits 16-47) stay IPv6 addresses, and
 *   {@link embeddedIPv4} gives the IPv4 address they carry. Such an address is classed as the
 *   more restrictive of itself and its IPv4 address ({@link classifyAddress}):
 *   `64:ff9b::169.254.169.254` is always refused, `64:ff9b::10.0.0.5` private,
 *   `64:ff9b::8.8.8.8` public. A CIDR entry lists it when it contains the carried IPv4 address
 *   (so `10.0.0.0/8` lists `64:ff9b::10.0.0.5`, as it lists `::ffff:10.0.0.5`). A CIDR entry
 *   that contains only the IPv6 form (`64:ff9b::/96`, `2002::/16`, `::/0`) lists it only when
 *   the carried IPv4 address is public: an IPv6 entry is never consent to reach a private IPv4
 *   address. In general each private side (the IPv6 address, the IPv4 address) must be contained
 *   in a CIDR entry of its own.
 * - **Local-use NAT64** `64:ff9b:1::/48` (RFC 8215: where the IPv4 address sits depends on the
 *   operator's prefix length, /48 to /96) and **Teredo** `2001::/32` (the client IPv4 address is
 *   the last 32 bits XOR 0xffffffff, the server's in bits 32-63) are not decoded: they are private
 *   (refused unless listed), which is at least as strict as any address they could carry except
 *   the always-refused ones, and no ERP is reached through them in practice.
 *
 * `allowedTargets` entries (`ERP_ALLOWED_TARGETS`), compiled once by {@link compileTargetPolicy}:
 *
 * - a host name, `erp.example.com`: matches that name only (case-insensitive, a trailing dot is
 *   ignored, IDN names match in their punycode form);
 * - a wildcard, `*.example.com`: matches any subdomain at any depth (`a.example.com`,
 *   `a.b.example.com`) but not the apex `example.com`;
 * - a CIDR, `10.0.0.0/8`, `fd12::/16`, or a bare IP (`/32` or `/128`): matches the address. Host
 *   bits are ignored (`10.1.2.3/8` is `10.0.0.0/8`). An IPv4-mapped IPv6 CIDR with a prefix of 96
 *   or more (`::ffff:10.0.0.0/104`) is the IPv4 CIDR it maps to. Any other IPv6 CIDR, including
 *   one inside `64:ff9b::/96` or `2002::/16`, stays IPv6: to allow a private IPv4 address reached
 *   through NAT64 or 6to4, list the IPv4 range (see above).
 *
 * An invalid entry makes {@link compileTargetPolicy} throw an `Error` naming it (cold start).
 *
 * Messages are short and never contain a secret: they echo only the scheme and host (never the
 * user-info, path or query), and for a host name never the address it resolved to (so the proxy
 * cannot be used to map internal DNS).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { TargetRefusedError } from '../platform/errors.ts';

/** The target policy as configured (`Config.allowedTargets`, `Config.allowedDatabases`). */
export interface TargetPolicy {
  /** Host names, `*.` wildcards, CIDRs and bare IPs (`ERP_ALLOWED_TARGETS`). */
  readonly allowedTargets: readonly string[];
  /** Database names (`ERP_ALLOWED_DATABASES`); empty means any database. */
  readonly allowedDatabases: readonly string[];
}

/**
 * An IP address as a number. IPv4-mapped IPv6 addresses are stored as IPv4 (see {@link parseIp});
 * other IPv6 forms that carry an IPv4 address stay IPv6 (see {@link embeddedIPv4}).
 */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

/** A parsed CIDR block. `network` has its host bits cleared. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
}

/** A {@link TargetPolicy} with its entries parsed once. Build it with {@link compileTargetPolicy}. */
export interface CompiledTargetPolicy {
  /** True when `allowedTargets` had at least one entry (the target must then match one). */
  readonly restricted: boolean;
  readonly exactNames: ReadonlySet<string>;
  /** Wildcard entries as suffixes with their leading dot: `*.example.com` is `.example.com`. */
  readonly wildcardSuffixes: readonly string[];
  readonly cidrs: readonly Cidr[];
  readonly allowedDatabases: ReadonlySet<string>;
}

/** How {@link classifyAddress} sees an address. */
export type AddressClass = 'public' | 'private' | 'always-refused';

/** Link-local, metadata, unspecified, multicast and reserved ranges: refused even when listed. */
export const ALWAYS_REFUSED_RANGES: readonly string[] = Object.freeze([
  '0.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and the broadcast 255.255.255.255
  '::/128',
  'fe80::/10',
  'fd00:ec2::254/128',
  'ff00::/8', // multicast
]);

/**
 * Private, CGNAT, loopback and site-local ranges, and the IPv6 forms that carry an IPv4 address
 * the policy does not decode (local-use NAT64, Teredo): refused unless listed.
 */
export const PRIVATE_RANGES: readonly string[] = Object.freeze([
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '::1/128',
  'fc00::/7',
  'fec0::/10', // site-local (deprecated, still routed inside some sites)
  '64:ff9b:1::/48', // local-use NAT64 (RFC 8215)
  '2001::/32', // Teredo
]);

// ---------------------------------------------------------------------------------------------
// IP helpers
// ---------------------------------------------------------------------------------------------

const V4_MAPPED_PREFIX = 0xffffn; // ::ffff:0:0/96, the upper 96 bits
const SIIT_PREFIX = 0xffff_0000n; // ::ffff:0:0:0/96, the upper 96 bits
const NAT64_PREFIX = 0x0064_ff9b_0000_0000_0000_0000n; // 64:ff9b::/96, the upper 96 bits
const SIX_TO_FOUR_PREFIX = 0x2002n; // 2002::/16, the upper 16 bits
const U32 = 0xffff_ffffn;

/** Parses a strict dotted-decimal IPv4 address (no leading zeros) to a 32-bit number. */
export function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

/**
 * Parses an IPv6 address (with `::`, an embedded IPv4 tail such as `::ffff:1.2.3.4`, and an
 * optional `%zone`, which is ignored) to a 128-bit number.
 */
export function parseIPv6(text: string): bigint | undefined {
  const zone = text.indexOf('%');
  let rest = zone === -1 ? text : text.slice(0, zone);
  if (rest === '' || rest.length > 45) return undefined;

  let tail: bigint[] = [];
  const lastColon = rest.lastIndexOf(':');
  if (lastColon === -1) return undefined;
  const last = rest.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (v4 === undefined) return undefined;
    tail = [(v4 >> 16n) & 0xffffn, v4 & 0xffffn];
    // Drop the IPv4 part; keep a `::` just before it (`::ffff:1.2.3.4` -> `::ffff`, `::1.2.3.4` -> `::`).
    rest = rest.slice(0, lastColon + 1);
    if (!rest.endsWith('::')) rest = rest.slice(0, -1);
  }

  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const parseGroups = (part: string): bigint[] | undefined => {
    if (part === '') return [];
    const groups: bigint[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
      groups.push(BigInt(`0x${group}`));
    }
    return groups;
  };
  const head = parseGroups(halves[0] ?? '');
  const after = halves.length === 2 ? parseGroups(halves[1] ?? '') : [];
  if (head === undefined || after === undefined) return undefined;
  const explicit = head.length + after.length + tail.length;
  let groups: bigint[];
  if (halves.length === 2) {
    if (explicit > 7) return undefined;
    groups = [...head, ...new Array<bigint>(8 - explicit).fill(0n), ...after, ...tail];
  } else {
    if (explicit !== 8) return undefined;
    groups = [...head, ...tail];
  }
  let value = 0n;
  for (const group of groups) value = (value << 16n) | group;
  return value;
}

/**
 * Parses an IPv4 or IPv6 address, with or without `[` `]`. An IPv4-mapped IPv6 address
 * (`::ffff:0:0/96`, in either notation) is returned as the IPv4 address it maps to. Other forms
 * that carry an IPv4 address (NAT64, IPv4-compatible, SIIT, 6to4) are returned as IPv6: see
 * {@link embeddedIPv4}.
 */
export function parseIp(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (bare.includes(':')) {
    const value = parseIPv6(bare);
    if (value === undefined) return undefined;
    if (value >> 32n === V4_MAPPED_PREFIX) return { family: 4, value: value & U32 };
    return { family: 6, value };
  }
  const value = parseIPv4(bare);
  return value === undefined ? undefined : { family: 4, value };
}

/** Parses `address/prefix` (or a bare address, meaning `/32` or `/128`). Throws on bad input. */
export function parseCidr(text: string): Cidr {
  const slash = text.lastIndexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const bare =
    addressText.startsWith('[') && addressText.endsWith(']') ? addressText.slice(1, -1) : addressText;
  const isV6 = bare.includes(':');
  const raw = isV6 ? parseIPv6(bare) : parseIPv4(bare);
  if (raw === undefined || bare.includes('%')) throw new Error(`"${text}" is not a valid IP address or CIDR`);
  const bits = isV6 ? 128 : 32;
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
      throw new Error(`"${text}" has an invalid prefix length (0 to ${bits})`);
    }
    prefix = Number(prefixText);
  }
  if (isV6 && prefix >= 96 && raw >> 32n === V4_MAPPED_PREFIX) {
    return makeCidr(4, raw & U32, prefix - 96);
  }
  return makeCidr(isV6 ? 6 : 4, raw, prefix);
}

function makeCidr(family: 4 | 6, address: bigint, prefix: number): Cidr {
  const hostBits = BigInt((family === 4 ? 32 : 128) - prefix);
  return { family, network: (address >> hostBits) << hostBits, prefix };
}

/** True when `cidr` contains `ip` (same family only; IPv4-mapped addresses count as IPv4). */
export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.family !== ip.family) return false;
  const hostBits = BigInt((cidr.family === 4 ? 32 : 128) - cidr.prefix);
  return ip.value >> hostBits === cidr.network >> hostBits;
}

const ALWAYS_REFUSED_CIDRS = ALWAYS_REFUSED_RANGES.map(parseCidr);
const PRIVATE_CIDRS = PRIVATE_RANGES.map(parseCidr);

/**
 * The IPv4 address an IPv6 address carries, for the forms the policy decodes: NAT64
 * `64:ff9b::/96` (RFC 6052), IPv4-compatible `::/96` (except `::` and `::1`), SIIT
 * `::ffff:0:0:0/96` (the last 32 bits) and 6to4 `2002::/16` (bits 16-47, the relay's address).
 * `undefined` for an IPv4 address (IPv4-mapped addresses are parsed as IPv4) and for any other
 * IPv6 address.
 */
export function embeddedIPv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  const upper96 = ip.value >> 32n;
  if (upper96 === NAT64_PREFIX || upper96 === SIIT_PREFIX || (upper96 === 0n && ip.value > 1n)) {
    return { family: 4, value: ip.value & U32 };
  }
  if (ip.value >> 112n === SIX_TO_FOUR_PREFIX) return { family: 4, value: (ip.value >> 80n) & U32 };
  return undefined;
}

/** The class of the address itself, from the ranges only. */
function classifyOwn(ip: IpAddress): AddressClass {
  if (ALWAYS_REFUSED_CIDRS.some((cidr) => cidrContains(cidr, ip))) return 'always-refused';
  if (PRIVATE_CIDRS.some((cidr) => cidrContains(cidr, ip))) return 'private';
  return 'public';
}

const STRICTNESS: Readonly<Record<AddressClass, number>> = { public: 0, private: 1, 'always-refused': 2 };

/**
 * Classifies an address: always refused, private/loopback, or public. An IPv6 address that
 * carries an IPv4 address ({@link embeddedIPv4}) is the more restrictive of its own class and the
 * class of that IPv4 address.
 */
export function classifyAddress(ip: IpAddress): AddressClass {
  const own = classifyOwn(ip);
  const carried = embeddedIPv4(ip);
  if (carried === undefined) return own;
  const inner = classifyOwn(carried);
  return STRICTNESS[inner] > STRICTNESS[own] ? inner : own;
}

// ---------------------------------------------------------------------------------------------
// Compiling the policy
// ---------------------------------------------------------------------------------------------

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Lower-cases a host name and drops one trailing dot (`ERP.Example.com.` is `erp.example.com`). */
function normalizeHostName(name: string): string {
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
 * Parses the policy once (cold start). Throws an `Error` naming the first invalid
 * `allowedTargets` entry. Database names are kept as they are (exact match).
 */
export function compileTargetPolicy(policy: TargetPolicy): CompiledTargetPolicy {
  const exactNames = new Set<string>();
  const wildcardSuffixes: string[] = [];
  const cidrs: Cidr[] = [];
  for (const raw of policy.allowedTargets) {
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
  return Object.freeze({
    restricted: policy.allowedTargets.length > 0,
    exactNames,
    wildcardSuffixes: Object.freeze(wildcardSuffixes),
    cidrs: Object.freeze(cidrs),
    allowedDatabases: new Set(policy.allowedDatabases),
  });
}

/** True when a (normalized) host name matches a host-name or wildcard entry. */
function nameListed(policy: CompiledTargetPolicy, name: string): boolean {
  if (policy.exactNames.has(name)) return true;
  return policy.wildcardSuffixes.some((suffix) => name.length > suffix.length && name.endsWith(suffix));
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

type Verdict = 'ok' | 'always-refused' | 'private' | 'not-listed';

function judge(policy: CompiledTargetPolicy, ip: IpAddress, hostName: string | undefined): Verdict {
  const kind = classifyAddress(ip);
  if (kind === 'always-refused') return 'always-refused';
  if (hostName !== undefined && nameListed(policy, hostName)) return 'ok';
  const carried = embeddedIPv4(ip);
  const inOwn = policy.cidrs.some((cidr) => cidrContains(cidr, ip));
  const inCarried = carried !== undefined && policy.cidrs.some((cidr) => cidrContains(cidr, carried));
  // Each private side must be contained in a CIDR entry of its own: `::/0` or `64:ff9b::/96` is
  // no consent to reach 10.0.0.5 through NAT64, while `10.0.0.0/8` is (as for `::ffff:10.0.0.5`).
  const listed =
    (inOwn || inCarried) &&
    (inOwn || classifyOwn(ip) === 'public') &&
    (inCarried || carried === undefined || classifyOwn(carried) === 'public');
  if (listed) return 'ok';
  if (kind === 'private') return 'private';
  return policy.restricted ? 'not-listed' : 'ok';
}

const MAX_ECHO = 100;

/** Shortens user-supplied text for a message. */
function echo(text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text;
}

const KNOWN_SCHEMES = new Set([
  'file:',
  'ftp:',
  'ws:',
  'wss:',
  'data:',
  'javascript:',
  'gopher:',
  'blob:',
  'mailto:',
]);
const ALLOWED_SCHEMES = new Set(['http:', 'https:']);

function refused(message: string): TargetRefusedError {
  return new TargetRefusedError(message);
}

/**
 * The pre-flight check of a client-supplied target URL (and database). Throws
 * `TargetRefusedError` when refused; returns the parsed URL otherwise. A host name that passes
 * here is checked again at connect time through {@link createPolicyLookup}.
 */
export function checkTarget(policy: CompiledTargetPolicy, url: string, db?: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused('Target refused: not a valid URL; expected http(s)://host[:port]');
  }
  if (!ALLOWED_SCHEMES.has(parsed.protocol)) {
    // An unknown "scheme" may be the user part of a scheme-less `user:pass@host`: not echoed.
    const scheme = KNOWN_SCHEMES.has(parsed.protocol) ? ` (${parsed.protocol})` : '';
    throw refused(`Target refused: only http: and https: URLs are allowed${scheme}`);
  }
  const origin = echo(`${parsed.protocol}//${parsed.host}`);
  if (parsed.username !== '' || parsed.password !== '') {
    throw refused(`Target ${origin} refused: remove the user:password@ part from the URL`);
  }
  if (parsed.hostname === '') throw refused('Target refused: the URL has no host');

  if (db !== undefined && policy.allowedDatabases.size > 0 && !policy.allowedDatabases.has(db)) {
    throw refused(
      `Database ${JSON.stringify(echo(db))} is not allowed by this proxy (ERP_ALLOWED_DATABASES)`,
    );
  }

  const ip = parseIp(parsed.hostname);
  if (ip !== undefined) {
    const verdict = judge(policy, ip, undefined);
    if (verdict !== 'ok') throw refused(`Target ${origin} refused: ${reason(verdict, 'is')}`);
    return parsed;
  }
  if (parsed.hostname.startsWith('[') || isIP(parsed.hostname) !== 0) {
    // Cannot happen with WHATWG URL (it validates IP literals), but never let one through unchecked.
    throw refused(`Target ${origin} refused: unrecognized IP address`);
  }
  const name = normalizeHostName(parsed.hostname);
  if (policy.restricted && policy.cidrs.length === 0 && !nameListed(policy, name)) {
    throw refused(`Target ${origin} refused: ${reason('not-listed', 'is')}`);
  }
  return parsed;
}

function reason(verdict: Exclude<Verdict, 'ok'>, verb: 'is' | 'resolves to'): string {
  switch (verdict) {
    case 'always-refused':
      return `${verb === 'is' ? 'it is' : 'it resolves to'} a link-local, metadata, unspecified, multicast or reserved address, which is never allowed`;
    case 'private':
      return `${verb === 'is' ? 'it is' : 'it resolves to'} a private or loopback address not listed in ERP_ALLOWED_TARGETS`;
    case 'not-listed':
      return verb === 'is'
        ? 'not listed in ERP_ALLOWED_TARGETS'
        : 'it resolves to an address not listed in ERP_ALLOWED_TARGETS';
  }
}

/**
 * The connect-time check of one resolved address for `hostname` (the URL's host name, as given
 * to `lookup`). Throws `TargetRefusedError`. The message names the host, never the address.
 */
export function checkResolvedAddress(policy: CompiledTargetPolicy, hostname: string, address: string): void {
  const host = echo(hostname);
  const ip = parseIp(address);
  if (ip === undefined) throw refused(`Target ${host} refused: it resolves to an unrecognized address`);
  const name = isIP(hostname) === 0 && !hostname.startsWith('[') ? normalizeHostName(hostname) : undefined;
  const verdict = judge(policy, ip, name);
  if (verdict !== 'ok') throw refused(`Target ${host} refused: ${reason(verdict, 'resolves to')}`);
}

// ---------------------------------------------------------------------------------------------
// Connect-time lookup
// ---------------------------------------------------------------------------------------------

/** The callback of a `net.connect` `lookup` function. */
export type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The `net.connect` `lookup` option signature (`net.LookupFunction`). */
export type PolicyLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** The resolver {@link createPolicyLookup} wraps; always called with `all: true`. */
export type BaseLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for `net.connect` / `http.request({ lookup })` that resolves with
 * `baseLookup` (all addresses) and fails with a `TargetRefusedError` when ANY resolved address is
 * refused. With `options.all` it answers the array, otherwise the first address and its family.
 */
export function createPolicyLookup(
  policy: CompiledTargetPolicy,
  baseLookup: BaseLookup = dnsLookup,
): PolicyLookup {
  return (hostname, options, callback) => {
    // `net` always passes an options object; tolerate the `dns.lookup(host, family, cb)` form.
    const opts: LookupOptions = typeof options === 'number' ? { family: options } : { ...(options ?? {}) };
    const wantAll = opts.all === true;
    const fail = (err: Error): void => callback(err as NodeJS.ErrnoException, wantAll ? [] : '');
    try {
      baseLookup(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return fail(err);
        if (!Array.isArray(addresses) || addresses.length === 0) {
          const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          notFound.code = 'ENOTFOUND';
          return fail(notFound);
        }
        try {
          for (const entry of addresses) checkResolvedAddress(policy, hostname, entry.address);
        } catch (error) {
          return fail(error as Error);
        }
        if (wantAll) return callback(null, addresses);
        const first = addresses[0]!;
        return callback(null, first.address, first.family);
      });
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  };
}

/**
 * Digs the `TargetRefusedError` out of an error thrown by the socket layer: the error itself,
 * its `cause` chain, or the `errors` of an `AggregateError`. `undefined` when there is none.
 */
export function findTargetRefusal(err: unknown): TargetRefusedError | undefined {
  const queue: unknown[] = [err];
  const seen = new Set<unknown>();
  while (queue.length > 0 && seen.size < 50) {
    const current = queue.shift();
    if (current instanceof TargetRefusedError) return current;
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    if ('cause' in current) queue.push(current.cause);
    if (current instanceof AggregateError) queue.push(...current.errors);
  }
  return undefined;
}
