/**
 * @module platform/ip-address
 * IP addresses and CIDR blocks as numbers: strict parsing (IPv4 in dotted decimal without
 * leading zeros; other spellings are refused, never guessed), CIDR containment, and the IPv4
 * address some IPv6 forms carry. Pure functions, no policy: what is allowed is decided by the
 * target policy (`upstream/target-policy.ts`, docs/target-policy.md).
 *
 * IPv6 addresses that carry an IPv4 address:
 *
 * - **IPv4-mapped** `::ffff:0:0/96` (`::ffff:a.b.c.d`, `::ffff:7f00:1`) is parsed as the IPv4
 *   address it maps to ({@link parseIp} returns an IPv4 address): it IS that address.
 * - **NAT64** `64:ff9b::/96` (RFC 6052), **IPv4-compatible** `::/96` (deprecated; `::` and `::1`
 *   keep their own meaning), **SIIT** `::ffff:0:a.b.c.d` (`::ffff:0:0:0/96`) and **6to4**
 *   `2002::/16` (the relay's IPv4 address in bits 16-47) stay IPv6 addresses, and
 *   {@link embeddedIPv4} gives the IPv4 address they carry.
 * - **Local-use NAT64** `64:ff9b:1::/48` and **Teredo** `2001::/32` are not decoded: where the
 *   IPv4 address sits depends on the operator's prefix, or is hidden.
 */

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

/**
 * The address a connection to `ip` reaches, as the target policy decodes it: the IPv4 address an
 * IPv6 form carries ({@link embeddedIPv4}; an IPv4-mapped address already is IPv4), else `ip`
 * itself. One ERP, one identity: the limits key an ERP's budget by it (docs/design.md, "Limits: protecting the ERP").
 */
export function addressIdentity(ip: IpAddress): IpAddress {
  return embeddedIPv4(ip) ?? ip;
}

/** An IPv4 address (a 32-bit number) in dotted decimal, as `URL` writes it. */
export function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/**
 * A URL's host (`URL.hostname`: lower case, IPv4 in dotted decimal, IPv6 compressed in brackets) as
 * the one ERP it names: an IP address that is or carries an IPv4 address ({@link addressIdentity})
 * as that IPv4 address in dotted decimal (`[::ffff:7f00:2]`, `[64:ff9b::7f00:2]` and
 * `[2002:7f00:2::]` are all `127.0.0.2`); any other host (a name, another IPv6 address) unchanged.
 * A name is not resolved here (the limits resolve one when an entry names an address:
 * core/limits-check.ts).
 */
export function hostIdentity(hostname: string): string {
  // A name and an IPv4 address are written by `URL` as they are: only a bracketed IPv6 host can
  // carry another identity (and a call with no ERP limit does no more than this test).
  if (!hostname.startsWith('[')) return hostname;
  const ip = parseIp(hostname);
  if (ip === undefined) return hostname;
  const identity = addressIdentity(ip);
  return identity.family === 4 ? formatIPv4(identity.value) : hostname;
}
