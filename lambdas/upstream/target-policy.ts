/**
 * @module upstream/target-policy
 * The target policy (docs/target-policy.md): the proxy must not be an open door into the network.
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
 * gateway with DNS64 reaches `10.0.0.5` as `[64:ff9b::a00:5]`; which forms are decoded is told
 * in `platform/ip-address.ts`): an IPv4-mapped address IS its IPv4 address. A NAT64,
 * IPv4-compatible, SIIT or 6to4 address is classed as the more restrictive of itself and the
 * IPv4 address it carries ({@link classifyAddress}): `64:ff9b::169.254.169.254` is always
 * refused, `64:ff9b::10.0.0.5` private, `64:ff9b::8.8.8.8` public. A CIDR entry lists it when it
 * contains the carried IPv4 address (so `10.0.0.0/8` lists `64:ff9b::10.0.0.5`, as it lists
 * `::ffff:10.0.0.5`). A CIDR entry that contains only the IPv6 form (`64:ff9b::/96`, `2002::/16`,
 * `::/0`) lists it only when the carried IPv4 address is public: an IPv6 entry is never consent
 * to reach a private IPv4 address. In general each private side (the IPv6 address, the IPv4
 * address) must be contained in a CIDR entry of its own. Local-use NAT64 and Teredo, not
 * decoded, are private (refused unless listed), which is at least as strict as any address they
 * could carry except the always-refused ones, and no ERP is reached through them in practice.
 *
 * `allowedTargets` entries (`ERP_ALLOWED_TARGETS`: host names, `*.` wildcards, CIDRs and bare
 * IPs, whose syntax `platform/target-list.ts` describes) are compiled once by
 * {@link compileTargetPolicy}. An IPv6 CIDR inside `64:ff9b::/96` or `2002::/16` stays IPv6: to
 * allow a private IPv4 address reached through NAT64 or 6to4, list the IPv4 range (see above).
 *
 * An invalid entry makes {@link compileTargetPolicy} throw an `Error` naming it (cold start).
 *
 * Messages are short and never contain a secret: they echo only the scheme and host (never the
 * user-info, path or query), and for a host name never the address it resolved to. For a host
 * name that `allowedTargets` does not list by name, every connect-time answer is one and the same
 * refusal, whether the name does not exist, resolves to a private, loopback or metadata address,
 * or to an address outside the list: so the proxy cannot be used to map internal DNS. A DNS
 * failure stays a DNS failure (-32004) only for a name listed by name.
 */
import {
  ADDRCONFIG,
  lookup as dnsLookup,
  type LookupAddress,
  type LookupAllOptions,
  type LookupOptions,
} from 'node:dns';
import { isIP } from 'node:net';
import { echoed } from '../platform/bounded-text.ts';
import { TargetRefusedError } from '../platform/errors.ts';
import { cidrContains, embeddedIPv4, type IpAddress, parseCidr, parseIp } from '../platform/ip-address.ts';
import {
  listsHostName,
  normalizeHostName,
  parseTargetList,
  type TargetList,
} from '../platform/target-list.ts';

/** The target policy as configured (`Config.allowedTargets`, `Config.allowedDatabases`). */
export interface TargetPolicy {
  /** Host names, `*.` wildcards, CIDRs and bare IPs (`ERP_ALLOWED_TARGETS`). */
  readonly allowedTargets: readonly string[];
  /** Database names (`ERP_ALLOWED_DATABASES`); empty means any database. */
  readonly allowedDatabases: readonly string[];
}

/**
 * A {@link TargetPolicy} with its entries parsed once (the {@link TargetList} of
 * `allowedTargets`). Build it with {@link compileTargetPolicy}.
 */
export interface CompiledTargetPolicy extends TargetList {
  /** True when `allowedTargets` had at least one entry (the target must then match one). */
  readonly restricted: boolean;
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
// Classifying addresses
// ---------------------------------------------------------------------------------------------

const ALWAYS_REFUSED_CIDRS = ALWAYS_REFUSED_RANGES.map(parseCidr);
const PRIVATE_CIDRS = PRIVATE_RANGES.map(parseCidr);

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

/**
 * Parses the policy once (cold start). Throws an `Error` naming the first invalid
 * `allowedTargets` entry. Database names are kept as they are (exact match).
 */
export function compileTargetPolicy(policy: TargetPolicy): CompiledTargetPolicy {
  return Object.freeze({
    ...parseTargetList(policy.allowedTargets),
    restricted: policy.allowedTargets.length > 0,
    allowedDatabases: new Set(policy.allowedDatabases),
  });
}

/** True when a (normalized) host name matches a host-name or wildcard entry. */
function nameListed(policy: CompiledTargetPolicy, name: string): boolean {
  return listsHostName(policy, name);
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
export function checkTarget(policy: CompiledTargetPolicy, url: URL | string, db?: string): URL {
  let parsed: URL;
  try {
    // The request path hands over the URL it parsed; a text is parsed here.
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw refused('Target refused: not a valid URL; expected http(s)://host[:port]');
  }
  if (!ALLOWED_SCHEMES.has(parsed.protocol)) {
    // An unknown "scheme" may be the user part of a scheme-less `user:pass@host`: not echoed.
    const scheme = KNOWN_SCHEMES.has(parsed.protocol) ? ` (${parsed.protocol})` : '';
    throw refused(`Target refused: only http: and https: URLs are allowed${scheme}`);
  }
  const origin = echoed(`${parsed.protocol}//${parsed.host}`);
  if (parsed.username !== '' || parsed.password !== '') {
    throw refused(`Target ${origin} refused: remove the user:password@ part from the URL`);
  }
  if (parsed.hostname === '') throw refused('Target refused: the URL has no host');

  if (db !== undefined && policy.allowedDatabases.size > 0 && !policy.allowedDatabases.has(db)) {
    throw refused(
      `Database ${JSON.stringify(echoed(db))} is not allowed by this proxy (ERP_ALLOWED_DATABASES)`,
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
 * The one refusal for a host name that `ERP_ALLOWED_TARGETS` does not list by name, whatever DNS
 * said: no address, a private or loopback address, a metadata address, an address outside the
 * list. Telling these apart would let a caller map the proxy's internal DNS (which names exist,
 * which are internal), so the code, the HTTP status and the message are the same for all.
 */
function unreachableName(hostname: string): TargetRefusedError {
  return refused(
    `Target ${echoed(hostname)} refused: it does not resolve to an address this proxy may reach`,
  );
}

/** The normalized host name, or `undefined` when `hostname` is an IP literal. */
function hostNameOf(hostname: string): string | undefined {
  return isIP(hostname) === 0 && !hostname.startsWith('[') ? normalizeHostName(hostname) : undefined;
}

/**
 * The connect-time check of one resolved address for `hostname` (the URL's host name, as given
 * to `lookup`). Throws `TargetRefusedError`. The message names the host, never the address; for a
 * name not listed by name it is the one message of {@link unreachableName}, whatever the reason.
 */
export function checkResolvedAddress(policy: CompiledTargetPolicy, hostname: string, address: string): void {
  const name = hostNameOf(hostname);
  const listedByName = name !== undefined && nameListed(policy, name);
  const fail = (detail: string): TargetRefusedError =>
    name !== undefined && !listedByName
      ? unreachableName(hostname)
      : refused(`Target ${echoed(hostname)} refused: ${detail}`);
  const ip = parseIp(address);
  if (ip === undefined) throw fail('it resolves to an unrecognized address');
  const verdict = judge(policy, ip, name);
  if (verdict !== 'ok') throw fail(reason(verdict, 'resolves to'));
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
 *
 * A DNS failure (no such name, no address, a resolver error) is passed on as it is (the HTTP
 * client answers -32004, retry is safe) only for a name `ERP_ALLOWED_TARGETS` lists by name. For
 * any other name it is the same refusal as a name resolving to a refused address
 * ({@link unreachableName}): otherwise "unknown" and "internal" names could be told apart.
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
    const name = hostNameOf(hostname);
    const dnsFailure = (err: Error): void =>
      fail(name !== undefined && !nameListed(policy, name) ? unreachableName(hostname) : err);
    try {
      baseLookup(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return dnsFailure(err);
        if (!Array.isArray(addresses) || addresses.length === 0) {
          const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          notFound.code = 'ENOTFOUND';
          return dnsFailure(notFound);
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
      // A resolver that throws is a DNS failure like any other: one answer for an unlisted name.
      dnsFailure(error instanceof Error ? error : new Error(String(error)));
    }
  };
}

/** One DNS answer for a host name, every address of it checked by the policy: its addresses, or the DNS failure. */
export type TargetAnswer =
  | { readonly addresses: readonly LookupAddress[] }
  | { readonly failure: NodeJS.ErrnoException };

/**
 * The lookup options of a connection (`net.connect` on anything but Windows): all the addresses,
 * IPv6 ones only when this host has an IPv6 address of its own, in the resolver's order.
 */
const CONNECT_LOOKUP: LookupOptions = Object.freeze(
  process.platform === 'win32' ? { all: true } : { all: true, hints: ADDRCONFIG },
);

/**
 * Resolves `hostname` once, as a connection would, through `lookup` (a {@link createPolicyLookup},
 * so a name resolving to a refused address is refused exactly as at connect time): the answer's
 * addresses, or the DNS failure a connection would meet (`failure`), which is also the answer when
 * none came within `timeoutMs` (`EAI_AGAIN`). Rejects with the policy's `TargetRefusedError`, the
 * very refusal a connection would meet (a name not listed by name that does not resolve included).
 * The limits use it (core/limits-check.ts), and the call's connections then use its answer.
 */
export function resolveTarget(
  lookup: PolicyLookup,
  hostname: string,
  timeoutMs: number,
): Promise<TargetAnswer> {
  return new Promise<TargetAnswer>((resolve, reject) => {
    let settled = false;
    const settle = (then: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      then();
    };
    const timer = setTimeout(() => {
      const late: NodeJS.ErrnoException = new Error(
        `getaddrinfo EAI_AGAIN ${hostname} (no answer within ${timeoutMs} ms)`,
      );
      late.code = 'EAI_AGAIN';
      settle(() => resolve({ failure: late }));
    }, timeoutMs);
    lookup(hostname, CONNECT_LOOKUP, (err, addresses) => {
      if (err) {
        const refusal = findTargetRefusal(err);
        return settle(() => (refusal ? reject(refusal) : resolve({ failure: err })));
      }
      settle(() => resolve({ addresses: Array.isArray(addresses) ? addresses : [] }));
    });
  });
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
