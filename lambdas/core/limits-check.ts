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
 * - The store unreachable: the call is served (fail open, as Kong's default); the answer's facts
 *   say so (`limitsFailedOpen`), for the log line, the metric and its alarm. A store known down
 *   fails at once (its own pause: `platform/state/state-store-dynamodb.ts`), so a store that does
 *   not answer does not add the client's time budget to every call.
 */
import { createHash, randomUUID } from 'node:crypto';
import { RateLimitedError } from '../platform/errors.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import {
  hostOfUrl,
  IN_FLIGHT_RETRY_AFTER_SECONDS,
  type LimitPeriod,
  type LimitRule,
  type LimitScope,
  type RateLimit,
  type RateLimitReport,
  rateLimitHeaders,
  retryAfterSeconds,
  type TargetLimit,
  type TargetLimits,
  windowOf,
} from '../platform/limits.ts';
import type { StateStore } from '../platform/state/state-store.ts';
import type { CallerIdentity } from './inbound-call.ts';
import { type RequestFacts, withFacts } from './request-facts.ts';

/**
 * Who calls, as the limits count it: the caller (a key's name, or an OAuth person, whose budget is
 * their own with the limits of their identity's policy, so one person cannot use up a group's) and
 * the limits of its policy.
 */
export interface LimitCaller {
  readonly identity: CallerIdentity;
  /** The policy of the key (or identity) that called: its `limits`; `undefined`: no policy. */
  readonly keyPolicy: KeyPolicy | undefined;
}

/** What the limits need of the runtime. */
export interface LimitsDeps {
  /** The proxy's store; `undefined` when none is configured (limits then fail open). */
  readonly store: StateStore | undefined;
  /** `ERP_TARGET_LIMITS`. */
  readonly targetLimits: TargetLimits;
  /** The clock (epoch ms); tests pass their own. */
  readonly now?: () => number;
}

/** A call the limits let through: headers for its answer, facts for its log line, its slot. */
export interface Admission {
  /** `RateLimit-Policy` and `RateLimit` when rate limits applied. */
  readonly headers: Readonly<Record<string, string>>;
  readonly facts: RequestFacts;
  /** Frees the call's in-flight slot (if it took one). Never throws; call it once, after the last ERP request. */
  release(): Promise<void>;
}

/** One rate limit that applies to a call. */
interface AppliedRate {
  readonly scope: LimitScope;
  /** The budget's name inside the store key (a hash for a person). */
  readonly budget: string;
  readonly limit: RateLimit;
  /** The configured host, for an ERP's limit. */
  readonly host?: string;
}

const NO_RELEASE = async (): Promise<void> => {};

/** A short, fixed-length name for a budget: a hash (a person's `sub` is not kept in the store). */
function budgetHash(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22);
}

/** The rate limits and in-flight cap that apply to `caller` calling `target`. */
function limitsFor(
  deps: LimitsDeps,
  caller: LimitCaller,
  target: URL,
): { readonly rates: readonly AppliedRate[]; readonly erp: TargetLimit | undefined } {
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
  for (const limit of caller.keyPolicy?.limits ?? []) rates.push({ scope, budget, limit });
  const erp = deps.targetLimits.size === 0 ? undefined : deps.targetLimits.get(hostOfUrl(target));
  if (erp?.rate !== undefined)
    rates.push({ scope: 'erp', budget: erp.host, limit: erp.rate, host: erp.host });
  return { rates, erp };
}

const WHOSE: Readonly<Record<LimitScope, string>> = {
  key: "this key's",
  person: 'your',
  erp: "the ERP's",
};

function rateMessage(rate: AppliedRate, retryAfter: number): string {
  const whose = rate.scope === 'erp' ? `the ERP ${rate.host}'s` : WHOSE[rate.scope];
  const { requests, per } = rate.limit;
  return `Rate limited: ${whose} limit of ${requests} call${requests === 1 ? '' : 's'} per ${per} is used up; retry after ${retryAfter} s. The call did not run.`;
}

/**
 * An in-flight refusal: the ERP is busy (its cap of calls at once is reached), which a retry a
 * second later may find free; not a rate, whose budget only the window's end gives back.
 */
function busyMessage(host: string, cap: number): string {
  return `The ERP ${host} is busy: it has ${cap} call${cap === 1 ? '' : 's'} in flight through the proxy, its cap (in_flight); retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s. The call did not run.`;
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

/** The store failed: the limits fail open. */
function failedOpen(): Admission {
  return { headers: {}, facts: FAILED_OPEN, release: NO_RELEASE };
}

/**
 * Whether any limit applies to `caller` calling `target`: when not, {@link admitCall} does nothing
 * (no store work at all).
 */
export function limitsApply(deps: LimitsDeps, caller: LimitCaller, target: URL): boolean {
  if (caller.keyPolicy?.limits !== undefined) return true;
  return deps.targetLimits.size > 0 && deps.targetLimits.has(hostOfUrl(target));
}

/**
 * Counts the call against every limit that applies and takes an in-flight slot at its ERP.
 * Returns `undefined` when no limit applies; an {@link Admission} when the call may go on (its
 * `release` must be called after the call's last ERP request); throws a {@link RateLimitedError}
 * (-32004, HTTP 429, `Retry-After`) when a limit refuses it.
 *
 * @param leaseMs how long the slot may be held: the function's time left, so a slot held by an
 *   instance that died is free again within the function's timeout.
 */
export async function admitCall(
  deps: LimitsDeps,
  caller: LimitCaller,
  target: URL,
  leaseMs: number,
): Promise<Admission | undefined> {
  if (!limitsApply(deps, caller, target)) return undefined;
  const { rates, erp } = limitsFor(deps, caller, target);
  const store = deps.store;
  if (store === undefined) return failedOpen();
  const now = (deps.now ?? Date.now)();

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
    return failedOpen();
  }

  /** The headers of the answer; `uncounted`: a refused call's counts were taken back, so they are left. */
  const headersOf = (uncounted: boolean): Record<string, string> =>
    rateLimitHeaders(
      rates.map(
        (rate, index): RateLimitReport => ({
          name: `${rate.scope}-${rate.limit.per}`,
          limit: rate.limit,
          remaining:
            rate.limit.requests -
            (results[index]?.count ?? 0) +
            (uncounted && results[index]?.counted ? 1 : 0),
          resetSeconds: retryAfterSeconds(now, windows[index]?.endMs ?? now),
        }),
      ),
    );
  /** Gives back the counts this call took (another limit refuses it, so it does not count). */
  const uncount = async (): Promise<void> => {
    await Promise.all(
      rates.map((_rate, index) =>
        results[index]?.counted ? store.uncountRequest(keys[index] as string, now).catch(() => false) : false,
      ),
    );
  };

  const refusedIndex = results.findIndex((result) => !result.counted);
  if (refusedIndex >= 0) {
    await uncount();
    const rate = rates[refusedIndex] as AppliedRate;
    // Every refused window must have ended before a retry can pass.
    const retryAfter = Math.max(
      ...results.flatMap((result, index) =>
        result.counted ? [] : [retryAfterSeconds(now, windows[index]?.endMs ?? now)],
      ),
    );
    throw refusal(
      rateMessage(rate, retryAfter),
      ruleOf(rate.scope, rate.limit.per),
      retryAfter,
      headersOf(true),
      rate.host,
    );
  }

  const headers = headersOf(false);
  if (erp?.inFlight === undefined) return { headers, facts: {}, release: NO_RELEASE };
  let slot: { readonly key: string; readonly slot: number; readonly token: string } | undefined;
  try {
    slot = await takeSlot(store, erp.host, erp.inFlight, now, now + leaseMs);
  } catch {
    return { ...failedOpen(), headers };
  }
  if (slot === undefined) {
    await uncount();
    throw refusal(
      busyMessage(erp.host, erp.inFlight),
      'erp_in_flight',
      IN_FLIGHT_RETRY_AFTER_SECONDS,
      headersOf(true),
      erp.host,
    );
  }
  const held = slot;
  let released = false;
  return {
    headers,
    facts: {},
    release: async () => {
      if (released) return;
      released = true;
      // A release that fails leaves the slot to its lease (the function's timeout).
      await store.releaseSlot(held.key, held.slot, held.token).catch(() => false);
    },
  };
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
): Promise<{ readonly key: string; readonly slot: number; readonly token: string } | undefined> {
  const key = `erp#${host}`;
  const token = randomUUID();
  const first = Math.floor(Math.random() * cap);
  for (let tried = 0; tried < cap; tried += 1) {
    const slot = (first + tried) % cap;
    if (await store.acquireSlot({ key, slot, token, leaseUntil }, now)) return { key, slot, token };
  }
  return undefined;
}
