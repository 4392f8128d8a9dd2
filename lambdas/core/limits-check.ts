/**
 * @module core/limits-check
 * The one place the proxy's limits decide (README, "Limits"; docs/design.md, "Limits: protecting the ERP"): before a call
 * that would reach an ERP (an execute call, an MCP `tools/call`), after the key's policy and the
 * idempotency lookup, {@link admitCall} counts it against every rate limit that applies (the
 * caller key's, or an OAuth person's, and the ERP's) and takes one of the ERP's in-flight slots,
 * all in the proxy's store, so every instance of every function counts together.
 *
 * - One conditional write per rate limit (they run at once), one per in-flight slot tried, one
 *   release; nothing at all when no limit applies to the call.
 * - A call one limit refuses does not count in the others: the counts it took there are returned
 *   (the store's `uncountRequest`), and it never reaches the ERP. A call a rule refuses never gets
 *   here: every rule, an MCP tool's declared requests' included, rules at the earlier `policy` step.
 * - One ERP, one budget, whatever its name: when an entry of `ERP_TARGET_LIMITS` names an IP
 *   address and the call names a host, the name is resolved here, once, through the target policy's
 *   lookup ({@link erpLookupFor}); the first address of the answer an entry keys counts too (beside
 *   an entry of the name), and the call's connections go to that very address ({@link PinnedErp}:
 *   no second lookup between the count and the connect). With no such entry nothing is resolved.
 * - The store unreachable: the call is served (fail open, as Kong's default); the answer's facts
 *   say so (`limitsFailedOpen`), for the log line, the metric and its alarm. A store known down
 *   fails at once (its own pause: `platform/state/state-store-dynamodb.ts`), so a store that does
 *   not answer does not add the client's time budget to every call.
 */
import { createHash, randomUUID } from 'node:crypto';
import { echoed } from '../platform/bounded-text.ts';
import { monotonicMs } from '../platform/clock.ts';
import type { Config } from '../platform/config.ts';
import { RateLimitedError } from '../platform/errors.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import {
  addressHost,
  hostOfUrl,
  IN_FLIGHT_RETRY_AFTER_SECONDS,
  isAddressHost,
  type LimitPeriod,
  type LimitRule,
  type LimitScope,
  namesAddresses,
  type RateLimit,
  type RateLimitReport,
  rateLimitHeaders,
  retryAfterSeconds,
  type TargetLimit,
  type TargetLimits,
  windowOf,
} from '../platform/limits.ts';
import type { StateStore } from '../platform/state/state-store.ts';
import { type PolicyLookup, resolveTarget, type TargetAnswer } from '../upstream/target-policy.ts';
import { upstreamTimeoutMs } from '../upstream/time-budget.ts';
import type { PinnedErp } from './call-context.ts';
import type { CallerIdentity } from './inbound-call.ts';
import { type RequestFacts, type StoreMeter, withFacts } from './request-facts.ts';

/**
 * Who calls, as the limits count it: the caller (a key's name, or an OAuth person, whose budget is
 * their own with the limits of their identity's policy, so one person cannot use up a group's) and
 * the limits of its policy.
 */
export interface LimitCaller {
  readonly identity: CallerIdentity;
  /** The policy of the key (or identity) that called: its `limits`; `undefined`: no policy. */
  readonly keyPolicy: KeyPolicy | undefined;
  /** `x-request-timeout` as sent: with the time left, the call's time budget, which bounds a lookup of its ERP. */
  readonly requestTimeout?: string | undefined;
  /** Milliseconds left before the function is cut off (none in tests). */
  readonly remainingMs?: (() => number) | undefined;
  /** The request's store meter: the store's part of `Server-Timing`. */
  readonly storeMeter?: StoreMeter | undefined;
}

/**
 * Resolves the host name a call names, once, as its connections would: through the target policy's
 * lookup (`resolveTarget`), so a name resolving to a refused address is refused (rejects with the
 * policy's refusal), within the call's time budget.
 */
export type ErpLookup = (hostname: string, caller: LimitCaller) => Promise<TargetAnswer>;

/** What the limits need of the runtime. */
export interface LimitsDeps {
  /** The proxy's store; `undefined` when none is configured (limits then fail open). */
  readonly store: StateStore | undefined;
  /** `ERP_TARGET_LIMITS`. */
  readonly targetLimits: TargetLimits;
  /**
   * Resolves a call's ERP host name: set only when an entry of `targetLimits` names an IP address
   * ({@link erpLookupFor}); without it no call is resolved, and a host name costs nothing more.
   */
  readonly lookup?: ErpLookup;
  /** The clock (epoch ms); tests pass their own. */
  readonly now?: () => number;
}

/** A call the limits let through: headers for its answer, facts for its log line, its slot. */
export interface Admission {
  /** `RateLimit-Policy` and `RateLimit` when rate limits applied. */
  readonly headers: Readonly<Record<string, string>>;
  readonly facts: RequestFacts;
  /** Where the call's ERP requests connect, when its ERP's name was resolved here; `undefined`: as the URL says. */
  readonly pinned?: PinnedErp;
  /** Frees the call's in-flight slots (if it took any). Never throws; call it once, after the last ERP request. */
  release(): Promise<void>;
}

/** One rate limit that applies to a call. */
interface AppliedRate {
  readonly scope: LimitScope;
  /** The budget's name inside the store key (a hash for a person). */
  readonly budget: string;
  readonly limit: RateLimit;
  /** Its item's name in the `RateLimit-*` headers: `key-minute`, `erp-day`, `erp-address-day`. */
  readonly name: string;
  /** The configured host, for an ERP's limit. */
  readonly host?: string;
  /** For the limit of an address the call reached by name: that name (a refusal never tells the address). */
  readonly reachedBy?: string;
}

/** An entry of `ERP_TARGET_LIMITS` that applies to a call. */
interface AppliedErp {
  readonly limit: TargetLimit;
  /** For an entry the call's DNS answer matched: the name it reached it by (as {@link AppliedRate}). */
  readonly reachedBy?: string;
}

/**
 * The {@link ErpLookup} for `targetLimits`: `undefined` when no entry names an IP address (then no
 * call is ever resolved), else one through `lookup`, the target policy's connect-time lookup (the
 * one the HTTP client connects with: upstream/target-policy.ts), bounded by the call's time budget
 * (`x-request-timeout`, `ERP_DEFAULT_TIMEOUT`, `ERP_MAX_TIMEOUT`, the time left).
 */
export function erpLookupFor(
  targetLimits: TargetLimits,
  lookup: PolicyLookup,
  config: Pick<Config, 'defaultTimeoutSeconds' | 'maxTimeoutSeconds'>,
): ErpLookup | undefined {
  if (!namesAddresses(targetLimits)) return undefined;
  return (hostname, caller) =>
    resolveTarget(
      lookup,
      hostname,
      upstreamTimeoutMs({
        header: caller.requestTimeout,
        defaultSeconds: config.defaultTimeoutSeconds,
        maxSeconds: config.maxTimeoutSeconds,
        remainingMs: caller.remainingMs?.(),
      }),
    );
}

const NO_RELEASE = async (): Promise<void> => {};

/** A short, fixed-length name for a budget: a hash (a person's `sub` is not kept in the store). */
function budgetHash(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22);
}

/** What resolving a call's ERP host name gave: where its connections go, and the entry of that address. */
interface Resolved {
  readonly pinned: PinnedErp;
  /** The entry of the address the call connects to; `undefined`: no address of the answer is keyed. */
  readonly entry: TargetLimit | undefined;
}

/**
 * Resolves the host name `target` names, when the limits name addresses ({@link LimitsDeps.lookup}):
 * the first address of the answer an entry keys (the resolver's order: the one a connection tries
 * first), which the call then counts against and connects to; or, when none is keyed, the answer
 * (the connection picks among it, with no second lookup); or the name's DNS failure (the call counts
 * by name only, and its connection fails as it would have). `undefined` for an IP address (its own
 * entry is its budget) or without a lookup. A refused address rejects, as its connection would.
 */
async function resolveErp(deps: LimitsDeps, caller: LimitCaller, target: URL): Promise<Resolved | undefined> {
  const { lookup } = deps;
  if (lookup === undefined || isAddressHost(hostOfUrl(target))) return undefined;
  const { hostname } = target;
  const started = monotonicMs();
  const answer = await lookup(hostname, caller);
  const lookupMs = monotonicMs() - started;
  if ('failure' in answer)
    return { pinned: { connectTo: { hostname, failure: answer.failure }, lookupMs }, entry: undefined };
  for (const address of answer.addresses) {
    const host = addressHost(address.address);
    const entry = host === undefined ? undefined : deps.targetLimits.get(host);
    if (entry !== undefined) return { pinned: { connectTo: { hostname, address }, lookupMs }, entry };
  }
  return { pinned: { connectTo: { hostname, addresses: answer.addresses }, lookupMs }, entry: undefined };
}

/**
 * The rate limits and ERP entries that apply to `caller` calling `target`: the entry of the host
 * the URL names, and `byAddress`, the entry of the address its name resolved to (both count).
 */
function limitsFor(
  deps: LimitsDeps,
  caller: LimitCaller,
  target: URL,
  byAddress: TargetLimit | undefined,
): { readonly rates: readonly AppliedRate[]; readonly erps: readonly AppliedErp[] } {
  const rates: AppliedRate[] = [];
  const who = caller.identity;
  // A key's budget is its name; a person's, the token's issuer and subject (a token without `sub`:
  // its identity-map entry).
  const budget =
    who.kind === 'key'
      ? budgetHash('key', who.name)
      : who.subject === undefined
        ? budgetHash('identity', who.issuer, who.entry)
        : budgetHash('person', who.issuer, who.subject);
  const scope: LimitScope = who.kind === 'key' ? 'key' : 'person';
  for (const limit of caller.keyPolicy?.limits ?? [])
    rates.push({ scope, budget, limit, name: `${scope}-${limit.per}` });
  const erps: AppliedErp[] = [];
  const named = deps.targetLimits.size === 0 ? undefined : deps.targetLimits.get(hostOfUrl(target));
  if (named !== undefined) erps.push({ limit: named });
  if (byAddress !== undefined) erps.push({ limit: byAddress, reachedBy: echoed(hostOfUrl(target)) });
  for (const { limit, reachedBy } of erps) {
    if (limit.rate === undefined) continue;
    const name = `erp${reachedBy === undefined ? '' : '-address'}-${limit.rate.per}`;
    rates.push({ scope: 'erp', budget: limit.host, limit: limit.rate, name, host: limit.host, reachedBy });
  }
  return { rates, erps };
}

const WHOSE: Readonly<Record<LimitScope, string>> = {
  key: "this key's",
  person: 'your',
  erp: "the ERP's",
};

function rateMessage(rate: AppliedRate, retryAfter: number): string {
  const { requests, per } = rate.limit;
  const calls = `${requests} call${requests === 1 ? '' : 's'} per ${per}`;
  const limit =
    rate.reachedBy !== undefined
      ? `the limit of ${calls} of the address ${rate.reachedBy} resolves to`
      : `${rate.scope === 'erp' ? `the ERP ${rate.host}'s` : WHOSE[rate.scope]} limit of ${calls}`;
  return `Rate limited: ${limit} is used up; retry after ${retryAfter} s. The call did not run.`;
}

/**
 * An in-flight refusal: the ERP is busy (its cap of calls at once is reached), which a retry a
 * second later may find free; not a rate, whose budget only the window's end gives back.
 */
function busyMessage(erp: AppliedErp, cap: number): string {
  const which =
    erp.reachedBy === undefined
      ? `The ERP ${erp.limit.host}`
      : `The ERP at the address ${erp.reachedBy} resolves to`;
  return `${which} is busy: it has ${cap} call${cap === 1 ? '' : 's'} in flight through the proxy, its cap (in_flight); retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s. The call did not run.`;
}

function ruleOf(scope: LimitScope, per: LimitPeriod): LimitRule {
  return `${scope}_${per}`;
}

/** A refusal carrying the facts of its log line and metric. */
function refusal(
  message: string,
  rule: LimitRule,
  retryAfter: number,
  headers: Record<string, string>,
  host: string | undefined,
): RateLimitedError {
  return withFacts(new RateLimitedError(message, { rule, retryAfterSeconds: retryAfter, headers }), {
    limitRule: rule,
    ...(host === undefined ? {} : { limitHost: host }),
  });
}

/** The facts of a call served because the store could not be asked. */
const FAILED_OPEN: RequestFacts = Object.freeze({ limitsFailedOpen: true });

/** A call let through: its headers, facts, slots' release, and where it connects. */
function admitted(
  headers: Readonly<Record<string, string>>,
  facts: RequestFacts,
  release: () => Promise<void>,
  pinned: PinnedErp | undefined,
): Admission {
  return pinned === undefined ? { headers, facts, release } : { headers, facts, release, pinned };
}

/**
 * Whether any limit applies to `caller` calling `target`: when not, {@link admitCall} does nothing
 * (no store work at all). With entries naming addresses, a call naming a host may be one of them.
 */
export function limitsApply(deps: LimitsDeps, caller: LimitCaller, target: URL): boolean {
  if (caller.keyPolicy?.limits !== undefined) return true;
  if (deps.targetLimits.size === 0) return false;
  const host = hostOfUrl(target);
  return deps.targetLimits.has(host) || (deps.lookup !== undefined && !isAddressHost(host));
}

/**
 * Counts the call against every limit that applies and takes an in-flight slot at each of its ERP's
 * entries (the name's and the address's). Returns `undefined` when no limit applies; an
 * {@link Admission} when the call may go on (its `release` must be called after the call's last ERP
 * request, and its ERP requests connect where `pinned` says); throws a {@link RateLimitedError}
 * (-32004, HTTP 429, `Retry-After`) when a limit refuses it, or the target policy's refusal when
 * its ERP's name resolves to a refused address.
 *
 * @param leaseMs how long a slot may be held: the function's time left, so a slot held by an
 *   instance that died is free again within the function's timeout.
 */
export async function admitCall(
  deps: LimitsDeps,
  caller: LimitCaller,
  target: URL,
  leaseMs: number,
): Promise<Admission | undefined> {
  if (!limitsApply(deps, caller, target)) return undefined;
  const resolved = await resolveErp(deps, caller, target);
  const pinned = resolved?.pinned;
  const { rates, erps } = limitsFor(deps, caller, target, resolved?.entry);
  const capped = erps.filter((erp) => erp.limit.inFlight !== undefined);
  // A host name whose answer no entry keys, for a caller without limits: nothing to count.
  if (rates.length === 0 && capped.length === 0) return admitted({}, {}, NO_RELEASE, pinned);
  const store = deps.store;
  if (store === undefined) return admitted({}, FAILED_OPEN, NO_RELEASE, pinned);
  const now = (deps.now ?? Date.now)();
  const timed = <W>(work: Promise<W>): Promise<W> => caller.storeMeter?.timed(work) ?? work;

  const counts = await timed(countRates(store, rates, now));
  if (counts === undefined) return admitted({}, FAILED_OPEN, NO_RELEASE, pinned);
  const refused = counts.refused();
  if (refused !== undefined) {
    await timed(counts.uncount());
    throw refused;
  }
  const headers = counts.headers(false);
  if (capped.length === 0) return admitted(headers, {}, NO_RELEASE, pinned);
  const slots = await timed(takeSlots(store, capped, now, now + leaseMs));
  if ('busy' in slots) {
    await timed(counts.uncount());
    const { busy } = slots;
    const cap = busy.limit.inFlight as number;
    throw refusal(
      busyMessage(busy, cap),
      'erp_in_flight',
      IN_FLIGHT_RETRY_AFTER_SECONDS,
      counts.headers(true),
      busy.limit.host,
    );
  }
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await timed(releaseSlots(store, slots.held));
  };
  return admitted(headers, slots.failedOpen ? FAILED_OPEN : {}, release, pinned);
}

/** A call's counts against its rate limits, taken at once. */
interface Counts {
  /** The refusal of the first limit that did not count the call; `undefined`: all counted it. */
  refused(): RateLimitedError | undefined;
  /** The headers of the answer; `uncounted`: a refused call's counts were taken back, so they are left. */
  headers(uncounted: boolean): Record<string, string>;
  /** Gives back the counts this call took (another limit refuses it, so it does not count). */
  uncount(): Promise<void>;
}

/** Counts the call against each of `rates` (one conditional write each, at once); `undefined`: the store failed. */
async function countRates(
  store: StateStore,
  rates: readonly AppliedRate[],
  now: number,
): Promise<Counts | undefined> {
  const windows = rates.map((rate) => windowOf(now, rate.limit.per));
  const keys = rates.map(
    (rate, index) =>
      `${rate.scope}#${rate.budget}#${rate.limit.per}#${(windows[index]?.startMs ?? 0) / 1000}`,
  );
  let results: { counted: boolean; count: number }[];
  try {
    results = await Promise.all(
      rates.map((rate, index) =>
        store.countRequest(
          {
            key: keys[index] as string,
            limit: rate.limit.requests,
            expiresAt: Math.ceil((windows[index]?.endMs ?? now) / 1000),
          },
          now,
        ),
      ),
    );
  } catch {
    return undefined;
  }
  const headers = (uncounted: boolean): Record<string, string> =>
    rateLimitHeaders(
      rates.map(
        (rate, index): RateLimitReport => ({
          name: rate.name,
          limit: rate.limit,
          remaining:
            rate.limit.requests -
            (results[index]?.count ?? 0) +
            (uncounted && results[index]?.counted ? 1 : 0),
          resetSeconds: retryAfterSeconds(now, windows[index]?.endMs ?? now),
        }),
      ),
    );
  return {
    headers,
    refused() {
      const refusedIndex = results.findIndex((result) => !result.counted);
      if (refusedIndex < 0) return undefined;
      const rate = rates[refusedIndex] as AppliedRate;
      // Every refused window must have ended before a retry can pass.
      const retryAfter = Math.max(
        ...results.flatMap((result, index) =>
          result.counted ? [] : [retryAfterSeconds(now, windows[index]?.endMs ?? now)],
        ),
      );
      return refusal(
        rateMessage(rate, retryAfter),
        ruleOf(rate.scope, rate.limit.per),
        retryAfter,
        headers(true),
        rate.host,
      );
    },
    async uncount() {
      await Promise.all(
        rates.map((_rate, index) =>
          results[index]?.counted
            ? store.uncountRequest(keys[index] as string, now).catch(() => false)
            : false,
        ),
      );
    },
  };
}

/** One in-flight slot a call holds. */
interface Slot {
  readonly key: string;
  readonly slot: number;
  readonly token: string;
}

/**
 * Takes a slot at each of `capped`, in order (the name's entry, then the address's): the slots held,
 * or the entry whose cap is reached (the slots taken before it given back). A store that fails
 * fails open: the slots taken so far are held, the rest not taken.
 */
async function takeSlots(
  store: StateStore,
  capped: readonly AppliedErp[],
  now: number,
  leaseUntil: number,
): Promise<{ readonly held: readonly Slot[]; readonly failedOpen: boolean } | { readonly busy: AppliedErp }> {
  const held: Slot[] = [];
  for (const erp of capped) {
    let slot: Slot | undefined;
    try {
      slot = await takeSlot(store, erp.limit.host, erp.limit.inFlight as number, now, leaseUntil);
    } catch {
      return { held, failedOpen: true };
    }
    if (slot === undefined) {
      await releaseSlots(store, held);
      return { busy: erp };
    }
    held.push(slot);
  }
  return { held, failedOpen: false };
}

/** Frees slots; a release that fails leaves the slot to its lease (the function's timeout). */
async function releaseSlots(store: StateStore, held: readonly Slot[]): Promise<void> {
  await Promise.all(
    held.map((slot) => store.releaseSlot(slot.key, slot.slot, slot.token).catch(() => false)),
  );
}

/**
 * Takes one of the `cap` slots of an ERP: tries them from a random one on, one conditional write
 * each, until one is free (or its lease has passed). `undefined` when all are held.
 */
async function takeSlot(
  store: StateStore,
  host: string,
  cap: number,
  now: number,
  leaseUntil: number,
): Promise<Slot | undefined> {
  const key = `erp#${host}`;
  const token = randomUUID();
  const first = Math.floor(Math.random() * cap);
  for (let tried = 0; tried < cap; tried += 1) {
    const slot = (first + tried) % cap;
    if (await store.acquireSlot({ key, slot, token, leaseUntil }, now)) return { key, slot, token };
  }
  return undefined;
}
