/**
 * @module core/brakes-check
 * Where the operators' brakes stop calls (docs/design.md, "Brakes"): the gate's `brakes` step, after
 * the policy (a caller the policy refuses learns nothing of them) and before the idempotency lookup
 * (a replay of a kept answer is stopped too: the operator said stop, and the caller gets its replay
 * once the brake is released); the version endpoints after their policies (a version call only
 * reads); and, for a key braked `all`, right after the key is checked on every route.
 *
 * A stopped call is -32012: never counted, never sent, and audited when it can write.
 */
import {
  type Brake,
  type BrakeSubject,
  brakedAddresses,
  brakeFor,
  brakeRefusal,
  keyStopped,
  scopeKind,
} from '../platform/brakes/brakes.ts';
import type { BrakesSource } from '../platform/brakes/brakes-source.ts';
import { hostOfUrl, isAddressHost } from '../platform/limits.ts';
import type { CallerIdentity } from './inbound-call.ts';
import { type StoreMeter, withFacts } from './request-facts.ts';

/** A call as the brakes read it: who calls, the ERP it names, and whether it can write. */
export function brakeSubject(
  identity: CallerIdentity,
  target: URL | undefined,
  writes: boolean,
): BrakeSubject {
  return {
    ...(identity.kind === 'key' ? { key: identity.name } : { identity: identity.entry }),
    erp: target === undefined ? undefined : hostOfUrl(target),
    writes,
  };
}

/** Throws the refusal of `brake` (-32012) with the facts the log line and the `Braked` metric read. */
function stop(brake: Brake, now: number): never {
  throw withFacts(brakeRefusal(brake, now), {
    brake: { id: brake.id, scope: scopeKind(brake.scope), mode: brake.mode },
  });
}

/**
 * The addresses a host name resolves to, as the limits name them (`addressHost`), through the target
 * policy's lookup: a name resolving to a refused address rejects as its connection would.
 */
export type ErpAddresses = (hostname: string) => Promise<readonly string[]>;

function stopIfBraked(
  brakes: readonly Brake[],
  subject: BrakeSubject,
  addresses: ErpAddresses | undefined,
): void | Promise<void> {
  if (brakes.length === 0) return;
  const now = Date.now();
  const brake = brakeFor(brakes, subject, now);
  if (brake !== undefined) return stop(brake, now);
  // An `erp` brake naming an address binds every host name that resolves to it.
  if (
    addresses === undefined ||
    subject.erp === undefined ||
    isAddressHost(subject.erp) ||
    !brakedAddresses(brakes, now, isAddressHost)
  )
    return;
  return addresses(subject.erp).then((resolved) => {
    const later = Date.now();
    const byAddress = brakeFor(brakes, { ...subject, addresses: resolved }, later);
    if (byAddress !== undefined) stop(byAddress, later);
  });
}

/**
 * Refuses (throws -32012) a call a brake in force stops: at once when the instance's copy is fresh
 * (no store work), else after the copy is read (the returned promise rejects).
 */
export function checkBrakes(
  source: BrakesSource,
  subject: BrakeSubject,
  storeMeter?: StoreMeter,
  addresses?: ErpAddresses,
): void | Promise<void> {
  const fresh = source.fresh(Date.now());
  if (fresh !== undefined) return stopIfBraked(fresh, subject, addresses);
  const read = source.read(Date.now());
  return (storeMeter?.timed(read) ?? read).then((brakes) => stopIfBraked(brakes, subject, addresses));
}

function stopIfKeyStopped(brakes: readonly Brake[], keyName: string): void {
  if (brakes.length === 0) return;
  const now = Date.now();
  const brake = keyStopped(brakes, keyName, now);
  if (brake !== undefined) stop(brake, now);
}

/**
 * Refuses (throws -32012) a proxy key braked `all`: the instant revocation, on every route. At once
 * when the copy is fresh, else after it is read (the returned promise rejects).
 */
export function checkKeyBrake(source: BrakesSource, keyName: string): void | Promise<void> {
  const fresh = source.fresh(Date.now());
  if (fresh !== undefined) return stopIfKeyStopped(fresh, keyName);
  return source.read(Date.now()).then((brakes) => stopIfKeyStopped(brakes, keyName));
}
