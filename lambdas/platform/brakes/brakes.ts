/**
 * @module platform/brakes/brakes
 * Operators' brakes (docs/operators.md, "Stop an agent now"; docs/design.md, "Brakes"): what
 * a brake is, how the state store keeps the set of brakes (one item, a JSON list under a version),
 * and which brake, if any, stops a call. Pure: no store, no clock of its own.
 *
 * A brake has a scope (every call, a proxy key's name, an OAuth identity-map entry, or an ERP as
 * `ERP_TARGET_LIMITS` names it), a mode (`writes`: the calls that can write; `all`: every call of
 * the scope), a reason shown to the caller, and an optional expiry, judged at call time.
 */
import { BrakedError } from '../errors.ts';

/** `writes` stops the calls that can write (reads go on); `all` stops every call of the scope. */
export const BRAKE_MODES = Object.freeze(['writes', 'all'] as const);
export type BrakeMode = (typeof BRAKE_MODES)[number];

/** The kinds of scope: the `scope` dimension of the `Braked` metric (never a name). */
export const BRAKE_SCOPE_KINDS = Object.freeze(['all', 'key', 'identity', 'erp'] as const);
export type BrakeScopeKind = (typeof BRAKE_SCOPE_KINDS)[number];

/** What a brake stops: every call, one key name, one identity-map entry, or one ERP. */
export type BrakeScope =
  | 'all'
  | { readonly key: string }
  | { readonly identity: string }
  | { readonly erp: string };

/** One brake, as `GET /_/brakes` lists it and the store keeps it. */
export interface Brake {
  readonly id: string;
  readonly scope: BrakeScope;
  readonly mode: BrakeMode;
  readonly reason: string;
  /** UTC ISO 8601; the brake is released by itself then. */
  readonly expires?: string;
  /** The name of the proxy key that set it. */
  readonly set_by: string;
  /** UTC ISO 8601. */
  readonly set_at: string;
}

/** The most brakes in force at once: the item stays small, and every call reads it. */
export const MAX_BRAKES = 100;
/** The longest reason kept, in characters (it is shown to callers, agents included). */
export const MAX_BRAKE_REASON_CHARS = 300;
/** The longest name a scope takes (a key name, an identity entry, a host). */
export const MAX_BRAKE_NAME_CHARS = 256;

/**
 * Control, format (bidirectional, zero-width, tags), lone surrogates, private-use and unassigned
 * characters, line and paragraph separators: never kept in a reason.
 */
const UNSHOWN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;

/** `text` as shown to callers: unshown characters removed, runs of white space made one space. */
export function shownText(text: string): string {
  return text.replace(UNSHOWN, ' ').replace(/\s+/g, ' ').trim();
}

/** The state store's view of the brakes: the list and the version a write must name. */
export interface StoredBrakes {
  /** 0: never written. */
  readonly version: number;
  readonly brakes: readonly Brake[];
}

/** No brake, never written. */
export const NO_BRAKES: StoredBrakes = Object.freeze({ version: 0, brakes: Object.freeze([]) });

/** The scope kind of a brake (a metric dimension). */
export function scopeKind(scope: BrakeScope): BrakeScopeKind {
  if (scope === 'all') return 'all';
  if ('key' in scope) return 'key';
  if ('identity' in scope) return 'identity';
  return 'erp';
}

/** Whether a brake is in force at `now` (epoch ms): it has no expiry, or it has not come. */
export function inForce(brake: Brake, now: number): boolean {
  return brake.expires === undefined || Date.parse(brake.expires) > now;
}

/** Who and what a call is, as the brakes read it. */
export interface BrakeSubject {
  /** The proxy key's name (a key caller). */
  readonly key?: string | undefined;
  /** The identity-map entry (an OAuth caller). */
  readonly identity?: string | undefined;
  /** The ERP, as `ERP_TARGET_LIMITS` names it (`hostOfUrl`); `undefined`: a call that names none. */
  readonly erp?: string | undefined;
  /** The addresses the ERP's host name resolved to, as the limits name them (an `erp` brake of one binds it). */
  readonly addresses?: readonly string[] | undefined;
  /** Whether the call can write (`writes` brakes stop only those). */
  readonly writes: boolean;
}

function scopeHolds(scope: BrakeScope, subject: BrakeSubject): boolean {
  if (scope === 'all') return true;
  if ('key' in scope) return subject.key === scope.key;
  if ('identity' in scope) return subject.identity === scope.identity;
  return subject.erp === scope.erp || subject.addresses?.includes(scope.erp) === true;
}

/**
 * The brake in force at `now` that stops `subject`, `undefined` when none does. Of several, the one
 * that holds longest: one without an expiry, else the one that expires last, so the refusal's
 * `Retry-After` never names a time when another brake still stops the call.
 */
export function brakeFor(brakes: readonly Brake[], subject: BrakeSubject, now: number): Brake | undefined {
  let found: Brake | undefined;
  for (const brake of brakes) {
    if ((brake.mode === 'all' || subject.writes) && scopeHolds(brake.scope, subject) && inForce(brake, now)) {
      if (brake.expires === undefined) return brake;
      if (found === undefined || Date.parse(brake.expires) > Date.parse(found.expires as string))
        found = brake;
    }
  }
  return found;
}

/**
 * The brake that stops a proxy key on every route, right after the key is checked: a brake of that
 * key's name in mode `all` (the instant revocation, whatever the secrets cache holds).
 */
export function keyStopped(brakes: readonly Brake[], keyName: string, now: number): Brake | undefined {
  const ofKey = brakes.filter(
    (brake) => brake.mode === 'all' && brake.scope !== 'all' && 'key' in brake.scope,
  );
  return ofKey.length === 0 ? undefined : brakeFor(ofKey, { key: keyName, writes: false }, now);
}

/** The addresses `erp` brakes in force name (a host name's call is resolved only when one does). */
export function brakedAddresses(
  brakes: readonly Brake[],
  now: number,
  isAddress: (host: string) => boolean,
): boolean {
  return brakes.some(
    (brake) =>
      brake.scope !== 'all' && 'erp' in brake.scope && isAddress(brake.scope.erp) && inForce(brake, now),
  );
}

/** The brakes of `stored` still in force at `now`. */
export function brakesInForce(brakes: readonly Brake[], now: number): readonly Brake[] {
  return brakes.filter((brake) => inForce(brake, now));
}

/** Whether `value` is a scope as the store keeps it. */
function isScope(value: unknown): value is BrakeScope {
  if (value === 'all') return true;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length !== 1) return false;
  const [kind, name] = entries[0] as [string, unknown];
  return (kind === 'key' || kind === 'identity' || kind === 'erp') && typeof name === 'string';
}

/** Whether `value` is a brake as the store keeps it (a store item written by hand is checked too). */
function isBrake(value: unknown): value is Brake {
  if (typeof value !== 'object' || value === null) return false;
  const brake = value as Record<string, unknown>;
  return (
    typeof brake.id === 'string' &&
    isScope(brake.scope) &&
    (brake.mode === 'writes' || brake.mode === 'all') &&
    typeof brake.reason === 'string' &&
    (brake.expires === undefined ||
      (typeof brake.expires === 'string' && !Number.isNaN(Date.parse(brake.expires)))) &&
    typeof brake.set_by === 'string' &&
    typeof brake.set_at === 'string' &&
    !Number.isNaN(Date.parse(brake.set_at))
  );
}

/**
 * The brakes of the store's text (a JSON list); throws when it is not one, so a damaged item is a
 * failed read (the instance keeps the brakes it last read), never "no brakes".
 */
export function parseBrakeList(text: string): readonly Brake[] {
  const list: unknown = JSON.parse(text);
  if (!Array.isArray(list) || !list.every(isBrake))
    throw new Error('the brakes item is not a list of brakes');
  return Object.freeze(list.map((brake) => Object.freeze(brake)));
}

/**
 * The refusal of a call `brake` stops (-32012): the operator's reason, and `Retry-After` when the
 * brake expires by itself. The reason is the operator's words, shown to callers, agents included.
 */
export function brakeRefusal(brake: Brake, now: number): BrakedError {
  const until = brake.expires === undefined ? undefined : Date.parse(brake.expires);
  const when = until === undefined ? 'until an operator releases it' : `until ${brake.expires}`;
  const said = /[.!?]$/.test(brake.reason) ? brake.reason : `${brake.reason}.`;
  return new BrakedError(
    `Stopped by an operator: ${said} The call did not run; this brake (${brake.id}) holds ${when}.`,
    { brakeId: brake.id, ...(until === undefined ? {} : { retryAfterSeconds: (until - now) / 1000 }) },
  );
}
