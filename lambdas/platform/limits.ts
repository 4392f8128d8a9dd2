/**
 * @module platform/limits
 * The proxy's rate limits and in-flight caps as data (README, "Limits"; docs/design.md, "Limits: protecting the ERP"): the
 * periods a limit counts over, the `limits` of a key's (or an OAuth identity's) policy, the
 * `ERP_TARGET_LIMITS` setting, the window arithmetic and the `Retry-After` / `RateLimit-Policy` /
 * `RateLimit` values of an answer. The decision itself (counting in the store) is
 * `core/limits-check.ts`'s.
 *
 * Windows are fixed and aligned to the clock (UTC, from the Unix epoch): a limit of N per minute
 * admits at most N calls from :00 to :59 of each minute, so up to 2N can pass within one minute
 * across a boundary (N at :59, N at :00). That is the price of one conditional update per call.
 */
import * as z from 'zod/mini';
import { hostIdentity, parseIPv4 } from './ip-address.ts';
import { lazily } from './zod.ts';

/** The periods a rate limit counts over. */
export const LIMIT_PERIODS = Object.freeze(['second', 'minute', 'hour', 'day'] as const);
export type LimitPeriod = (typeof LIMIT_PERIODS)[number];

/** The length of each period, in seconds. */
export const PERIOD_SECONDS: Readonly<Record<LimitPeriod, number>> = Object.freeze({
  second: 1,
  minute: 60,
  hour: 3_600,
  day: 86_400,
});

/** The most calls one limit may name (a bound, so a count never leaves the integers a store keeps). */
export const MAX_LIMIT_REQUESTS = 1_000_000_000;
/** The most calls in flight one ERP's cap may name. */
export const MAX_IN_FLIGHT = 10_000;

/** One rate limit: at most `requests` calls per `per` window. */
export interface RateLimit {
  readonly requests: number;
  readonly per: LimitPeriod;
}

/** Whose budget a limit counts: a proxy key's name, an OAuth person, or an ERP host. */
export const LIMIT_SCOPES = Object.freeze(['key', 'person', 'erp'] as const);
export type LimitScope = (typeof LIMIT_SCOPES)[number];

/**
 * The rule that refused a call: a log field and the `rule` dimension of the `Throttled` metric
 * (few values): the scope and the period, or `erp_in_flight`.
 */
export type LimitRule = `${LimitScope}_${LimitPeriod}` | 'erp_in_flight';

/** Every {@link LimitRule}, in a fixed order. */
export const LIMIT_RULES: readonly LimitRule[] = Object.freeze([
  ...LIMIT_SCOPES.flatMap((scope) => LIMIT_PERIODS.map((per) => `${scope}_${per}` as const)),
  'erp_in_flight' as const,
]);

const positiveInteger = (max: number, what: string) =>
  z
    .number({ error: `expected ${what} (a positive integer)` })
    .check(z.int(`expected ${what} (a positive integer)`), z.minimum(1, `expected ${what} of at least 1`))
    .check(z.maximum(max, `expected ${what} of at most ${max}`));

const periodSchema = () =>
  z.enum(LIMIT_PERIODS, { error: `expected one of ${LIMIT_PERIODS.map((p) => `"${p}"`).join(', ')}` });

/**
 * The `limits` of a key's policy: a non-empty list of `{"requests": N, "per": period}`, all of
 * which must hold, at most one per period. Strict: an unknown field fails the policy.
 */
export const rateLimitListSchema = lazily(() =>
  z
    .array(
      z.strictObject(
        { requests: positiveInteger(MAX_LIMIT_REQUESTS, 'a number of requests'), per: periodSchema() },
        {
          error: (issue) =>
            issue.code === 'unrecognized_keys'
              ? `unknown field; a limit is {"requests": N, "per": "${LIMIT_PERIODS.join('" | "')}"}`
              : 'expected {"requests": N, "per": "second" | "minute" | "hour" | "day"}',
        },
      ),
      { error: 'expected a list of {"requests": N, "per": ...}' },
    )
    .check(
      z.minLength(1, 'an empty list limits nothing; leave the field out for no limit'),
      z.refine(
        (limits) => new Set(limits.map((limit) => limit.per)).size === limits.length,
        'at most one limit per period (each period has one budget)',
      ),
    ),
);

/** The limits of one ERP host (`ERP_TARGET_LIMITS`): a rate, an in-flight cap, or both. */
export interface TargetLimit {
  /** The host as configured, normalized: the metric's `host` dimension and the budget's name. */
  readonly host: string;
  readonly rate: RateLimit | undefined;
  readonly inFlight: number | undefined;
}

/** `ERP_TARGET_LIMITS`, compiled: by normalized host name or IP address. */
export type TargetLimits = ReadonlyMap<string, TargetLimit>;

/**
 * An exact host name or IP address as the limits name an ERP: as `URL` writes its `hostname` (lower
 * case, IPv4 in dotted decimal, IPv6 compressed in brackets), without a trailing dot, and an IPv6
 * address that carries an IPv4 address (mapped, NAT64, IPv4-compatible, SIIT, 6to4: the forms the
 * target policy decodes) as that IPv4 address ({@link hostIdentity}); `undefined` when `text` is
 * not one (a wildcard, a CIDR, a URL, a port).
 */
export function normalizeLimitHost(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || /[\s/*@?#%\\]/.test(trimmed)) return undefined;
  const ipv6 = trimmed.includes(':');
  if (ipv6 && !/^\[?[0-9a-fA-F:.]+\]?$/.test(trimmed)) return undefined;
  const bracketed = ipv6 && !trimmed.startsWith('[') ? `[${trimmed}]` : trimmed;
  let url: URL;
  try {
    url = new URL(`http://${bracketed}/`);
  } catch {
    return undefined;
  }
  if (url.port !== '' || url.username !== '' || url.pathname !== '/') return undefined;
  return hostOfUrl(url);
}

/**
 * The ERP a target URL names, as `ERP_TARGET_LIMITS` keys it (see {@link normalizeLimitHost}): one
 * budget per ERP whatever spelling of its address reaches it (docs/design.md, "Limits: protecting the ERP"). A host name
 * is not resolved here: the limits resolve it when an entry names an address (core/limits-check.ts,
 * {@link addressHost}).
 */
export function hostOfUrl(url: URL): string {
  const host = url.hostname.toLowerCase();
  return hostIdentity(host.endsWith('.') ? host.slice(0, -1) : host);
}

/**
 * Whether a host as the limits name it ({@link normalizeLimitHost}, {@link hostOfUrl}) is an IP
 * address (IPv4 in dotted decimal, IPv6 in brackets) rather than a host name. (`URL` reads a host
 * whose last label is numeric as IPv4, so a name never looks like one.)
 */
export function isAddressHost(host: string): boolean {
  return host.startsWith('[') || parseIPv4(host) !== undefined;
}

/**
 * Whether an entry of `limits` names an IP address: only then does the limits' step resolve the
 * host name a call names (core/limits-check.ts), so that its address counts too.
 */
export function namesAddresses(limits: TargetLimits): boolean {
  for (const host of limits.keys()) if (isAddressHost(host)) return true;
  return false;
}

/**
 * An address of a DNS answer (`dns.lookup`'s `address`: `10.0.0.5`, `::1`, `::ffff:10.0.0.5`) as
 * an entry keyed by it is named ({@link normalizeLimitHost}): an IPv6 form that carries an IPv4
 * address is that IPv4 address, an IPv6 address is compressed in brackets. `undefined` for what is
 * not an address (a scoped `fe80::1%eth0`, which the target policy refuses anyway).
 */
export function addressHost(address: string): string | undefined {
  const host = normalizeLimitHost(address);
  return host !== undefined && isAddressHost(host) ? host : undefined;
}

const TARGET_LIMIT_FIELDS = ['requests', 'per', 'in_flight'] as const;

/** One entry's problem, or its compiled limits. */
function compileTargetLimit(host: string, value: unknown): TargetLimit | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'expected an object {"requests", "per", "in_flight"}';
  const entry = value as Record<string, unknown>;
  const unknown = Object.keys(entry).filter(
    (field) => !(TARGET_LIMIT_FIELDS as readonly string[]).includes(field),
  );
  if (unknown.length > 0)
    return `unknown field${unknown.length > 1 ? 's' : ''} ${unknown
      .map((field) => JSON.stringify(field.slice(0, 32)))
      .join(', ')}; expected "requests", "per", "in_flight"`;
  const { requests, per, in_flight: inFlight } = entry;
  const count = (field: string, raw: unknown, max: number): number | string | undefined => {
    if (raw === undefined) return undefined;
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > max)
      return `${field}: expected an integer from 1 to ${max}`;
    return raw;
  };
  const requestsValue = count('requests', requests, MAX_LIMIT_REQUESTS);
  if (typeof requestsValue === 'string') return requestsValue;
  const inFlightValue = count('in_flight', inFlight, MAX_IN_FLIGHT);
  if (typeof inFlightValue === 'string') return inFlightValue;
  if (per !== undefined && !(LIMIT_PERIODS as readonly unknown[]).includes(per))
    return `per: expected one of ${LIMIT_PERIODS.map((p) => `"${p}"`).join(', ')}`;
  if ((requestsValue === undefined) !== (per === undefined))
    return '"requests" and "per" go together (N calls per window)';
  if (requestsValue === undefined && inFlightValue === undefined)
    return 'limits nothing: give "requests" and "per", "in_flight", or both; or leave the host out';
  return Object.freeze({
    host,
    rate: requestsValue === undefined ? undefined : { requests: requestsValue, per: per as LimitPeriod },
    inFlight: inFlightValue,
  });
}

/**
 * Parses `ERP_TARGET_LIMITS`: a JSON object (text, or an object from a settings file) from an exact
 * ERP host name or IP address to `{"requests": N, "per": period, "in_flight": N}`, each part
 * optional (`requests` with `per`). No wildcards or CIDRs; an address written in an IPv6 form that
 * carries an IPv4 address is that IPv4 address, and two entries naming one ERP are refused. (A
 * call to a host name whose DNS answer holds an address keyed here counts against both entries:
 * core/limits-check.ts.) Returns the limits, or every problem (naming the host, never a value).
 */
export function parseTargetLimits(
  raw: unknown,
): { readonly value: TargetLimits } | { readonly problem: readonly string[] } {
  let json: unknown = raw;
  if (typeof raw === 'string') {
    try {
      json = JSON.parse(raw);
    } catch {
      return {
        problem: ['expected a JSON object {"host": {"requests", "per", "in_flight"}}: not valid JSON'],
      };
    }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { problem: ['expected a JSON object {"host": {"requests", "per", "in_flight"}}'] };
  const limits = new Map<string, TargetLimit>();
  /** The entry that named each ERP first, as written: a second entry for it names both. */
  const namedBy = new Map<string, string>();
  const problems: string[] = [];
  for (const [name, value] of Object.entries(json)) {
    const shown = JSON.stringify(name.slice(0, 100));
    const host = normalizeLimitHost(name);
    if (host === undefined) {
      problems.push(`${shown}: not an exact host name or IP address (no scheme, port, wildcard or CIDR)`);
      continue;
    }
    const first = namedBy.get(host);
    if (first !== undefined) {
      problems.push(`${first} and ${shown} name one ERP (${host}), which has one budget: keep one entry`);
      continue;
    }
    namedBy.set(host, shown);
    const compiled = compileTargetLimit(host, value);
    if (typeof compiled === 'string') problems.push(`${shown}: ${compiled}`);
    else limits.set(host, compiled);
  }
  return problems.length > 0 ? { problem: problems } : { value: limits };
}

/** The setting's value back as JSON text (for a function's environment). */
export function targetLimitsText(limits: TargetLimits): string {
  const document: Record<string, Record<string, unknown>> = {};
  for (const [host, limit] of limits) {
    document[host] = {
      ...(limit.rate === undefined ? {} : { requests: limit.rate.requests, per: limit.rate.per }),
      ...(limit.inFlight === undefined ? {} : { in_flight: limit.inFlight }),
    };
  }
  return JSON.stringify(document);
}

// --- Windows ----------------------------------------------------------------------------------

/** One fixed window: `[startMs, endMs)`, aligned to the clock. */
export interface LimitWindow {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * The window of `per` that holds the instant `nowMs` (milliseconds since the epoch): it starts at
 * a whole multiple of the period and ends one period later.
 *
 * @example
 * windowOf(90_500, 'minute') // { startMs: 60_000, endMs: 120_000 }
 */
export function windowOf(nowMs: number, per: LimitPeriod): LimitWindow {
  const lengthMs = PERIOD_SECONDS[per] * 1000;
  const startMs = Math.floor(nowMs / lengthMs) * lengthMs;
  return { startMs, endMs: startMs + lengthMs };
}

/**
 * `Retry-After` in whole seconds for a call refused at `nowMs` by a window ending at `endMs`: the
 * seconds until the window ends, rounded up, and at least 1. So a retry after it lands in a later
 * window, and never later than the first whole second past the window's end.
 */
export function retryAfterSeconds(nowMs: number, endMs: number): number {
  return Math.max(1, Math.ceil((endMs - nowMs) / 1000));
}

/** `Retry-After` for an in-flight cap: one second (a slot frees when any call ends). */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

// --- Headers (draft-ietf-httpapi-ratelimit-headers) -------------------------------------------

/** One rate limit as an answer reports it. */
export interface RateLimitReport {
  /** The policy's name in the headers: `key-minute`, `person-second`, `erp-day`... */
  readonly name: string;
  readonly limit: RateLimit;
  /** Calls left in the current window (0 when refused). */
  readonly remaining: number;
  /** Seconds until the window ends (at least 1). */
  readonly resetSeconds: number;
}

/**
 * The `RateLimit-Policy` and `RateLimit` headers of an answer to a call that rate limits applied to
 * (structured-field lists, one item per limit): `"key-minute";q=60;w=60` and
 * `"key-minute";r=59;t=42`.
 */
export function rateLimitHeaders(reports: readonly RateLimitReport[]): Record<string, string> {
  if (reports.length === 0) return {};
  return {
    'RateLimit-Policy': reports
      .map((report) => `"${report.name}";q=${report.limit.requests};w=${PERIOD_SECONDS[report.limit.per]}`)
      .join(', '),
    RateLimit: reports
      .map((report) => `"${report.name}";r=${Math.max(0, report.remaining)};t=${report.resetSeconds}`)
      .join(', '),
  };
}
