/**
 * @module core/gate
 * The one gate every call that may reach an ERP passes (docs/design.md, "The order of checks"): an
 * execute call, with its ERP call as the run, and each MCP tool call, with the tool's run. Its
 * steps are {@link GATE_STEPS}, in order:
 *
 * 0. `audit` (a call that can write, `AUDIT` not `off`: core/audit/audit-call.ts): its record
 *    opened, and its end written whatever a later step decides (after the rest, `record`);
 * 1. `policy`: the proxy's target policy and the key's (or OAuth identity's) policy, once, on the
 *    call's question (API, model, method, target, database; an MCP tool too), then the rules that
 *    read the call's ERP requests ({@link GateCall.rule}: an MCP tool declares its requests first),
 *    so every rule (methods, fields, companies) has ruled, on both routes, before any other step;
 * 1a. `brakes` (the operators' brakes: core/brakes-check.ts): a call a brake in force stops is
 *    refused (-32012) here, after the policy (a caller the policy refuses learns nothing of them);
 * 2. `idempotency-lookup` (a write with a key): a replay or a conflict ends the call here; after
 *    the rest, the `record`;
 * 3. `confirmation` (an MCP write tool whose policy asks a person: core/confirm/gate-step.ts): a
 *    refusal or the person's no ends the call here; an asking round goes on with the form's reads
 *    as its run; an accepted one uses its confirmation up right before the run;
 * 4. `limits` (a limit that applies): the count and the in-flight slot (with an entry naming an
 *    address, the ERP's name resolved first: the run's requests connect where it counted); after
 *    the rest, the slot's `release`;
 * 4a. `audit-pending` (an audited call): its record written `pending` before the ERP; with `AUDIT=on`
 *    a record that cannot be written refuses the call (-32004), nothing sent;
 * 5. `idempotency-sent` (a write with a key): its record marked as about to reach the ERP, so a
 *    claim never marked is known not to have run (core/idempotency.ts);
 * 6. `run`: the ERP call, or the tool's run.
 *
 * Each step either ends the call (a refusal is thrown, a replay returned) or passes it on to the
 * rest, so a call refused at a step never reaches a later one: a refused call never counts, never
 * takes a slot, never reaches the ERP and is never recorded. A step passes the call on once: a
 * second pass would run it twice, and throws. A step that has no work for a call (no key, no limit
 * that applies) is passed over without a cost: such a call does no store work. A new step is one
 * more entry of {@link GATE_STEPS}.
 *
 * What the gate learned comes back as a value ({@link Passed}): the run's value, the limits'
 * facts and the call's `RateLimit-*` headers, kept apart from the value so an idempotency record
 * never keeps them (a replay was not counted).
 */

import type { BrakesSource } from '../platform/brakes/brakes-source.ts';
import type { Config } from '../platform/config.ts';
import { ProxyError } from '../platform/errors.ts';
import type { ErpCall } from '../upstream/erp-transport.ts';
import { type CompiledTargetPolicy, checkTarget } from '../upstream/target-policy.ts';
import type { AuditDeps, AuditSubject, AuditWriting } from './audit/audit-call.ts';
import { brakeSubject, checkBrakes, type ErpAddresses } from './brakes-check.ts';
import type { PinnedErp } from './call-context.ts';
import { type ConfirmGate, passConfirmation } from './confirm/gate-step.ts';
import { refuseUnconfirmedWrite } from './confirm/policy.ts';
import type { IdempotencyDeps, IdempotentCall, Keeping } from './idempotency.ts';
import { runOnceWith } from './idempotency.ts';
import type { InboundCall } from './inbound-call.ts';
import { checkKeyPolicy, type PolicyQuestion } from './key-policy-check.ts';
import { admitCall, type LimitsDeps, limitsApply } from './limits-check.ts';
import { type RequestFacts, withFacts } from './request-facts.ts';

/** A call's question to the policies: what it asks, with the ERP (target and database) it names. */
export interface CallQuestion extends PolicyQuestion {
  readonly target: URL;
}

/** An idempotent call: the record's key and fingerprint, and what a result means for it. */
export interface Once<T> {
  readonly call: IdempotentCall;
  readonly keeping: Keeping<T>;
}

/** One call at the gate. */
export interface GateCall<T> {
  /** Who calls (the limits' budget, the idempotency scope) and with which policy, and the time left. */
  readonly inbound: Pick<InboundCall, 'identity' | 'keyPolicy' | 'remainingMs'> &
    Partial<Pick<InboundCall, 'requestTimeout' | 'storeMeter'>>;
  readonly question: CallQuestion;
  /** A write with an idempotency key; `undefined`: no key, or a call that only reads (not recorded). */
  readonly once: Once<T> | undefined;
  /**
   * The call itself (the ERP call, the tool's run), run once every earlier step let it through;
   * `pinned`: where its ERP requests connect, when the limits resolved its ERP's name (core/limits-check.ts).
   */
  readonly run: (pinned?: PinnedErp) => Promise<T>;
  /** A person's confirmation of the call (an MCP write tool whose policy asks for it); `undefined`: none. */
  readonly confirm?: ConfirmGate<T> | undefined;
  /**
   * Marks the call's idempotency record as about to reach the ERP (set by the idempotency step;
   * `undefined`: no record, or a run that reaches no ERP, such as an asking round).
   */
  readonly sent?: (() => Promise<void>) | undefined;
  /**
   * The audit of a call that can write (core/audit/audit-call.ts): who calls, on which ERP, and how
   * its value ended. `undefined`: a call that only reads (not audited).
   */
  readonly audit?: AuditSubject<T> | undefined;
  /** The call's audit record, once the `audit` step opened it (the `audit-pending` step writes it). */
  readonly auditing?: AuditWriting<T> | undefined;
  /**
   * The call's ERP requests as values, as the policy step ruled them (an execute call's one
   * request; an MCP tool's declared requests, set by {@link rule}): what every later step may read.
   */
  readonly requests?: readonly ErpCall[];
  /**
   * The policy step's last rules, those that read the call's ERP requests (an MCP tool's
   * declaration and each request it declares: `methods`, `fields`, `companies`; an execute call's
   * `fields` and `companies`: core/policy/): the call as it runs after them (its requests, their
   * arguments and answer filters), or their refusal. `undefined`: the step does nothing more.
   */
  rule?(call: GateCall<T>): Promise<GateCall<T>>;
}

/** What the gate needs of the runtime. */
export interface GateDeps {
  readonly config: Config;
  readonly policy: CompiledTargetPolicy;
  readonly idempotency: IdempotencyDeps;
  /** The store and `ERP_TARGET_LIMITS`; `undefined`: no limits are checked (tests of other parts). */
  readonly limits?: LimitsDeps;
  /** The audit (`AUDIT`, its store and digest key); `undefined`: no call is audited (tests of other parts). */
  readonly audit?: AuditDeps;
  /** The instance's copy of the operators' brakes; `undefined`: no brakes (no store, tests of other parts). */
  readonly brakes?: BrakesSource;
  /** Resolves a host name for an `erp` brake that names an address; `undefined`: names bind by name only. */
  readonly brakesAddresses?: ErpAddresses | undefined;
}

/** A call through the gate: the run's value (or a replay's), what the steps learned, and its rate headers. */
export interface Passed<T> {
  readonly value: T;
  /** The limits' facts (`limitsFailedOpen`), for the log line. */
  readonly facts?: RequestFacts;
  /** `RateLimit-Policy` and `RateLimit` of a counted call (never a replay's: it costs no quota). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The rest of the gate after a step: takes the call on (a step may hand on a call it rewrote). */
export type Rest<T> = (call: GateCall<T>) => Promise<Passed<T>>;

/** One step of the gate. */
export interface GateStep {
  /** Its name in the order of checks (docs/design.md). */
  readonly name: string;
  /** The name of its part that runs after the rest (`release`, `record`), when it has one. */
  readonly after?: string;
  /** Whether the step has work for this call: a step without is passed over at no cost. */
  applies(call: GateCall<unknown>, deps: GateDeps): boolean;
  /** Ends the call (throws a refusal, or returns an answer of its own) or passes it to `rest`. */
  pass<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>>;
}

/**
 * The target policy and the key's policy on a call's question (README, "Key policies"). Rejects,
 * rather than throws, only when the key's targets need a DNS lookup. The version endpoints, which
 * have no ERP call to gate, ask it too.
 */
export function checkCallPolicies(
  policy: CompiledTargetPolicy,
  inbound: Pick<InboundCall, 'keyPolicy'>,
  question: CallQuestion,
): void | Promise<void> {
  checkTarget(policy, question.target, question.db);
  const pending = checkKeyPolicy(inbound.keyPolicy, question);
  // A key whose writes a person confirms writes only through /mcp, where a person can be asked.
  const confirmRule = (): void => {
    if (question.api !== 'mcp' && question.method !== undefined)
      refuseUnconfirmedWrite(inbound.keyPolicy, question.method, question.writes);
  };
  if (pending === undefined) return confirmRule();
  return pending.then(confirmRule);
}

function passPolicy<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  const pending = checkCallPolicies(deps.policy, call.inbound, call.question);
  const { rule } = call;
  if (rule === undefined) return pending === undefined ? rest(call) : pending.then(() => rest(call));
  // After the target and database rules: no lookup (a version, a fields_get) reaches an ERP the key may not.
  const ruled = pending === undefined ? rule.call(call, call) : pending.then(() => rule.call(call, call));
  return ruled.then(rest);
}

const policyStep: GateStep = { name: 'policy', applies: () => true, pass: passPolicy };

/** The operators' brakes (core/brakes-check.ts): a call that can write is the one the audit opened. */
function passBrakes<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  // No brake in force and a fresh copy (the usual case): nothing to read, nothing to build.
  if ((deps.brakes as BrakesSource).fresh(Date.now())?.length === 0) return rest(call);
  const subject = brakeSubject(call.inbound.identity, call.question.target, call.audit !== undefined);
  const pending = checkBrakes(
    deps.brakes as BrakesSource,
    subject,
    call.inbound.storeMeter,
    deps.brakesAddresses,
  );
  return pending === undefined ? rest(call) : pending.then(() => rest(call));
}

const brakesStep: GateStep = {
  name: 'brakes',
  applies: (_call, deps) => deps.brakes !== undefined,
  pass: passBrakes,
};

/**
 * The audit's opening (core/audit/audit-call.ts): the record of a call that can write, whose end is
 * written whatever a later step decides, and awaited before the answer.
 */
async function passAudit<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  const writing = (deps.audit as AuditDeps).open(call.audit as AuditSubject<T>, call);
  const { rule, once } = call;
  let passed: Passed<T>;
  try {
    passed = await rest({
      ...call,
      auditing: writing,
      // The idempotency record keeps its run's audit id: a replay's record names it.
      once: once === undefined ? undefined : { ...once, call: { ...once.call, auditId: writing.id } },
      // The record describes the requests as the policy step ruled them.
      rule:
        rule === undefined
          ? undefined
          : async (ruling) => {
              const ruled = await rule.call(ruling, ruling);
              writing.saw(ruled);
              return ruled;
            },
    });
  } catch (error) {
    throw withFacts(error, await writing.endedThrowing(error));
  }
  const facts = await writing.ended(passed.value);
  return { ...passed, facts: { ...passed.facts, ...facts } };
}

const auditStep: GateStep = {
  name: 'audit',
  after: 'audit-outcome',
  applies: (call, deps) => call.audit !== undefined && deps.audit !== undefined && deps.audit.mode !== 'off',
  pass: passAudit,
};

/** The record written `pending` right before the ERP; its end written as soon as the run ends. */
async function passAuditPending<T>(call: GateCall<T>, _deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  const writing = call.auditing as AuditWriting<T>;
  await writing.pending(call);
  try {
    const passed = await rest(call);
    writing.ranWith(passed.value);
    return passed;
  } catch (error) {
    writing.ranThrowing(error);
    throw error;
  }
}

const auditPendingStep: GateStep = {
  name: 'audit-pending',
  applies: (call) => call.auditing !== undefined,
  pass: passAuditPending,
};

/** A result's keeping, for the gate's value: the record keeps the value, never the rate headers. */
function passedKeeping<T>(keeping: Keeping<T>): Keeping<Passed<T>> {
  return {
    judge: (passed) => keeping.judge(passed.value),
    replay(kept, rest, envelopeId, replayOf) {
      const value = keeping.replay(kept, rest, envelopeId, replayOf);
      return value === undefined ? undefined : { value };
    },
    noted: (passed, idempotency) => ({ ...passed, value: keeping.noted(passed.value, idempotency) }),
  };
}

function passIdempotency<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  const once = call.once as NonNullable<typeof call.once>;
  return runOnceWith(
    deps.idempotency,
    once.call,
    (sent) => rest({ ...call, sent }),
    passedKeeping(once.keeping),
  );
}

const idempotencyStep: GateStep = {
  name: 'idempotency-lookup',
  after: 'record',
  applies: (call) => call.once !== undefined,
  pass: passIdempotency,
};

/** A person's confirmation (core/confirm/gate-step.ts): ends the call, or hands it on with its run rewritten. */
function passConfirmationStep<T>(call: GateCall<T>, _deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  return passConfirmation(call.confirm as NonNullable<typeof call.confirm>, call, rest);
}

const confirmationStep: GateStep = {
  name: 'confirmation',
  applies: (call) => call.confirm !== undefined,
  pass: passConfirmationStep,
};

/** How long an in-flight slot is leased when the function's time left is unknown (tests, a bare handler). */
const FALLBACK_LEASE_HEADROOM_MS = 3_000;

async function passLimits<T>(call: GateCall<T>, deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  // The slot's lease is the function's time left: a slot held by an instance that died is free
  // again within the function's timeout.
  const leaseMs =
    call.inbound.remainingMs?.() ?? deps.config.maxTimeoutSeconds * 1000 + FALLBACK_LEASE_HEADROOM_MS;
  const admission = await admitCall(deps.limits as LimitsDeps, call.inbound, call.question.target, leaseMs);
  if (admission === undefined) return rest(call);
  const { pinned } = admission;
  try {
    // Its ERP requests connect to the address the call counted against (no second lookup).
    const passed = await rest(pinned === undefined ? call : { ...call, run: () => call.run(pinned) });
    return {
      value: passed.value,
      facts: { ...passed.facts, ...admission.facts },
      headers: admission.headers,
    };
  } catch (error) {
    // A call counted, then failed (-32003, -32004...): its answer carries the limits' headers too
    // (an idempotency record keeps only a failure's code, never its headers).
    const { headers } = admission;
    if (error instanceof ProxyError && Object.keys(headers).length > 0) error.withHeaders(headers);
    throw withFacts(error, admission.facts);
  } finally {
    // The call's last ERP request is over: its in-flight slot is free for the next.
    await admission.release();
  }
}

const limitsStep: GateStep = {
  name: 'limits',
  after: 'release',
  applies: (call, deps) =>
    deps.limits !== undefined && limitsApply(deps.limits, call.inbound, call.question.target),
  pass: passLimits,
};

async function passSent<T>(call: GateCall<T>, _deps: GateDeps, rest: Rest<T>): Promise<Passed<T>> {
  await (call.sent as NonNullable<typeof call.sent>)();
  return rest(call);
}

/** The record of a keyed write marked sent, after the limits and before the run (a confirmation is used up in it). */
const sentStep: GateStep = {
  name: 'idempotency-sent',
  applies: (call) => call.sent !== undefined,
  pass: passSent,
};

async function passRun<T>(call: GateCall<T>): Promise<Passed<T>> {
  return { value: await call.run() };
}

const runStep: GateStep = { name: 'run', applies: () => true, pass: passRun };

/** The gate's steps, in order: the only place the order is written (docs/design.md holds its words to it). */
export const GATE_STEPS: readonly GateStep[] = Object.freeze([
  auditStep,
  policyStep,
  brakesStep,
  idempotencyStep,
  confirmationStep,
  limitsStep,
  auditPendingStep,
  sentStep,
  runStep,
]);

/**
 * The gate's order as a call meets it: each step's name, then the parts that run after the rest
 * (`release`, `record`), innermost first.
 */
export function gateOrder(steps: readonly GateStep[] = GATE_STEPS): readonly string[] {
  const afters = steps.flatMap((step) => (step.after === undefined ? [] : [step.after])).reverse();
  return [...steps.map((step) => step.name), ...afters];
}

function passFrom<T>(
  steps: readonly GateStep[],
  index: number,
  call: GateCall<T>,
  deps: GateDeps,
): Promise<Passed<T>> {
  for (let at = index; at < steps.length; at += 1) {
    const step = steps[at] as GateStep;
    if (!step.applies(call, deps)) continue;
    let passedOn = false;
    const rest: Rest<T> = (next) => {
      // Hono's and Powertools' "next() called multiple times" guard: a second pass would run the call twice.
      if (passedOn) throw new Error(`The gate's step ${step.name} passed the call on twice.`);
      passedOn = true;
      return passFrom(steps, at + 1, next, deps);
    };
    try {
      return step.pass(call, deps, rest);
    } catch (error) {
      // A step that refuses at once (a policy rule) rejects like one that refuses later.
      return Promise.reject(error);
    }
  }
  // The last step runs every call: reaching here is a gate written without it.
  return Promise.reject(new Error('The gate has no step that runs the call.'));
}

/**
 * Passes `call` through the gate's steps ({@link GATE_STEPS}): its value, facts and rate headers,
 * or the refusal of the step that ended it (thrown). `steps` is for tests (a mutated order).
 */
export function passGate<T>(
  call: GateCall<T>,
  deps: GateDeps,
  steps: readonly GateStep[] = GATE_STEPS,
): Promise<Passed<T>> {
  return passFrom(steps, 0, call, deps);
}
