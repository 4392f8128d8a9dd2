/**
 * @module core/mcp/run-tool
 * One tool call against the ERP, once the protocol layer has found the tool and checked its
 * arguments: a function from the call and its caller to a {@link ToolRun} value, the tool's
 * outcome with what the request log and metrics learn of it (docs/design.md, "The tools/call
 * pipeline"). In order:
 *
 * 1. the caller key's policy on the tool itself (a tool that writes, under a read key: -32008);
 * 2. (the admission point: nothing has reached the ERP yet; see {@link runTool})
 * 3. the tool's ERP calls within the request's time budget, each checked by the key's policy as
 *    execute's are; every failure becomes the tool's error result (core/mcp/answers.ts).
 *
 * It takes and returns plain values: the protocol layer (protocol/mcp/) turns the outcome into an
 * MCP result of its revision, and the facts into the request's.
 */
import { PROXY_ERRORS } from '../../platform/error-table.ts';
import { InternalError, ProxyError } from '../../platform/errors.ts';
import { isReadMethod } from '../../platform/key-policy.ts';
import { checkTarget } from '../../upstream/target-policy.ts';
import { admitToErp, checkCallPolicies, withCallContext } from '../forward.ts';
import {
  attemptLeaseMs,
  certainlyDidNotRun,
  fingerprintOf,
  idempotencyScope,
  type Keeping,
  keptValue,
  keptValueBytes,
  runOnceWith,
} from '../idempotency.ts';
import { checkKeyPolicy } from '../key-policy-check.ts';
import type { Admission } from '../limits-check.ts';
import { factsOf, learnedBefore, type RequestFacts, withFacts } from '../request-facts.ts';
import { erpFailure, failureJson, proxyFailure, type ToolAnswer, type ToolFailure } from './answers.ts';
import {
  erpConnection,
  erpDatabase,
  erpUrl,
  inConnectionWords,
  type McpErp,
  type McpInbound,
} from './connection.ts';
import { ErpAccess, ErpCallError, type McpDeps } from './erp-access.ts';
import type { McpTool } from './tools.ts';

/** A call the protocol layer has parsed: the declared tool and its checked arguments. */
export interface ToolCall {
  readonly tool: McpTool;
  readonly args: unknown;
}

/** How a tool call ended: its answer (without its facts), or its failure as the JSON text its error result shows. */
export type ToolOutcome =
  | { readonly ok: true; readonly answer: Omit<ToolAnswer, 'facts'> }
  | { readonly ok: false; readonly text: string };

/** A tool call's outcome and what the request log line and the metrics learn of it. */
export interface ToolRun {
  readonly outcome: ToolOutcome;
  readonly facts: RequestFacts;
}

/**
 * A failure: its text, and its outcome and code for the log line and metrics. A token caller is
 * told of the operator's identity map, never of a header (`inConnectionWords`).
 */
function failed(facts: RequestFacts, failure: ToolFailure, erp: McpErp): ToolRun {
  const { message, retry } = failure;
  const text = failureJson({
    ...failure,
    message: inConnectionWords(message, erp),
    retry: inConnectionWords(retry, erp),
  });
  return {
    outcome: { ok: false, text },
    facts: {
      ...facts,
      outcome: failure.source === 'erp' ? 'erp_error' : 'proxy_error',
      errorCode: failure.code,
    },
  };
}

/** What anything thrown while a tool ran becomes: an ERP error, a proxy error, or a bug (-32603). */
function failedRun(call: ToolCall, erp: McpErp, error: unknown): ToolRun {
  const readOnly = !call.tool.writes;
  const facts: RequestFacts = { tool: call.tool.name, ...factsOf(error) };
  if (error instanceof ErpCallError)
    return failed(facts, erpFailure(error.code, error.erpMessage, error.data, error.erpVersion), erp);
  // A policy refusal's advice names whose policy it is: the key's, or the identity-map entry's.
  const identity = erp.from === 'identity' ? erp.identity : undefined;
  if (error instanceof ProxyError) return failed(facts, proxyFailure(error, readOnly, identity), erp);
  // A bug: logged with its stack (observe reads it), shown as -32603 without details.
  return failed({ ...facts, internalError: error }, proxyFailure(new InternalError(error), readOnly), erp);
}

/** The tool's ERP calls within the request's time budget: its answer and all it learned. */
async function ranOnErp(call: ToolCall, caller: McpInbound, deps: McpDeps): Promise<ToolRun> {
  const { value, upstream } = await withCallContext(caller, deps.config, (context) =>
    call.tool.run(call.args as never, new ErpAccess(caller, deps, context)),
  );
  const { facts, ...answer } = value;
  return {
    outcome: { ok: true, answer },
    facts: { tool: call.tool.name, ...facts, ...upstream, outcome: 'success' },
  };
}

/** The method a write tool calls, for the read list and the key policy (`call_method`: its own). */
function methodOf(call: ToolCall): string {
  const args = call.args as { readonly method?: unknown };
  return call.tool.name === 'call_method' && typeof args.method === 'string' ? args.method : call.tool.name;
}

/**
 * The call's `idempotency_key` when it applies: a tool that writes, calling a method outside the
 * read list (a `call_method` of `name_search` only reads: not recorded, as on execute).
 */
function idempotencyKeyOf(call: ToolCall): string | undefined {
  const key = (call.args as { readonly idempotency_key?: unknown }).idempotency_key;
  if (typeof key !== 'string' || !call.tool.writes || isReadMethod(methodOf(call))) return undefined;
  return key;
}

/**
 * The fingerprint of a tool call: the tool, its arguments without `idempotency_key`, and the
 * caller's ERP connection (the same arguments against another ERP or user are another request).
 */
function toolFingerprint(call: ToolCall, caller: McpInbound): string {
  const { idempotency_key: _key, ...args } = call.args as Record<string, unknown>;
  return fingerprintOf(
    `mcp ${call.tool.name}`,
    new Map([
      ['arguments', JSON.stringify(args)],
      ['erp', JSON.stringify(caller.erp)],
    ]),
  );
}

/**
 * The target policy and the caller key's policy on a write tool's call, before its idempotency
 * lookup (`checkCallPolicies`, as execute asks them): the model and method it sends, and the
 * request's ERP connection (the `x-erp-*` headers, or the OAuth identity's), known before it runs.
 */
async function policiesBeforeLookup(call: ToolCall, caller: McpInbound, deps: McpDeps): Promise<void> {
  const connection = erpConnection(caller.erp, caller.presentedProxyKey);
  const { model } = call.args as { readonly model?: unknown };
  const method = methodOf(call);
  const facts = {
    erpHost: connection.baseUrl.host,
    erpDb: connection.db,
    ...(typeof model === 'string' ? { model } : {}),
    action: method,
  };
  await learnedBefore(facts, async () =>
    checkCallPolicies(deps.policy, caller.keyPolicy, {
      ...(typeof model === 'string' ? { model } : {}),
      method,
      target: connection.baseUrl,
      db: connection.db,
    }),
  );
}

/** What a tool's run means for its record (core/idempotency.ts): kept, forgotten, or unknown. */
function toolKeeping(call: ToolCall): Keeping<ToolRun> {
  return {
    judge(run) {
      if (run.outcome.ok) return { keep: keptValueBytes(run.outcome.answer) };
      // The ERP's own error rolled its transaction back; a proxy error may say the call did not run.
      if (run.facts.outcome === 'erp_error' || certainlyDidNotRun(run.facts.errorCode))
        return { forget: true };
      return { unknown: run.facts.errorCode ?? PROXY_ERRORS.internal.code };
    },
    replay(kept, rest) {
      const read = keptValue(kept, rest);
      if (read === undefined) return undefined;
      return {
        outcome: { ok: true, answer: read.value as Omit<ToolAnswer, 'facts'> },
        facts: { tool: call.tool.name, outcome: 'success', idempotency: 'replayed' },
      };
    },
    noted: (run, idempotency) => ({ outcome: run.outcome, facts: { ...run.facts, idempotency } }),
  };
}

/** The tool's run; the ERP's own refusal as its outcome (nothing changed), anything else thrown. */
async function ranOrRefusedByErp(call: ToolCall, caller: McpInbound, deps: McpDeps): Promise<ToolRun> {
  try {
    return await ranOnErp(call, caller, deps);
  } catch (error) {
    if (error instanceof ErpCallError) return failedRun(call, caller.erp, error);
    throw error;
  }
}

/**
 * The limits of a tool call (README, "Limits"), before its first ERP request: one count per tool
 * call however many requests the tool makes, and one in-flight slot held across them all.
 * Nothing when no limit is configured, or when the call names no ERP the target policy allows
 * (the tool then fails without reaching one, and a refused call does not count).
 */
function admitTool(caller: McpInbound, deps: McpDeps): Promise<Admission | undefined> | undefined {
  const limits = deps.limits;
  if (limits === undefined) return undefined;
  if (caller.keyPolicy?.limits === undefined && limits.targetLimits.size === 0) return undefined;
  let target: URL;
  try {
    target = checkTarget(deps.policy, erpUrl(caller.erp), erpDatabase(caller.erp));
  } catch {
    return undefined;
  }
  return admitToErp(caller, target, limits, deps.config);
}

/**
 * `run` within the tool call's limits (a refusal is thrown: the tool's error, -32004 with when to
 * retry), its in-flight slot released after the tool's last ERP request.
 */
async function limited(
  call: ToolCall,
  caller: McpInbound,
  deps: McpDeps,
  run: () => Promise<ToolRun>,
): Promise<ToolRun> {
  const admission = await admitTool(caller, deps);
  if (admission === undefined) return run();
  try {
    const ran = await run();
    return { outcome: ran.outcome, facts: { ...ran.facts, ...admission.facts } };
  } catch (error) {
    throw withFacts(error, { tool: call.tool.name, ...admission.facts });
  } finally {
    // The tool's last ERP request is over: its slot is free for the next call.
    await admission.release();
  }
}

/**
 * Runs one tool (its arguments checked) for `caller`; every failure becomes its outcome, so it
 * never throws. The admission point of issues 39 and 40 (a replay of an idempotent write, a
 * conflict, a rate refusal) is between the policy check and {@link ranOnErp}: a function of the
 * same `call` and `caller` that returns a `ToolRun` instead of running the tool; what follows the
 * run sees the returned `ToolRun` as a value. A write tool's `idempotency_key` runs the tool
 * through {@link runOnceWith} there (README, "Retrying writes safely"): a replay, -32010, -32011 or
 * "outcome unknown" comes back as the tool's outcome, the limits of issue 40 go inside.
 */
export async function runTool(call: ToolCall, caller: McpInbound, deps: McpDeps): Promise<ToolRun> {
  try {
    // The caller key's policy: a tool that changes data is refused to a read key (-32008).
    checkKeyPolicy(caller.keyPolicy, { tool: call.tool });
    const key = idempotencyKeyOf(call);
    if (key === undefined) return await limited(call, caller, deps, () => ranOnErp(call, caller, deps));
    // The policies before any replay, as execute asks them: never served to a key that may no
    // longer make the call (the ERP access asks them again on each ERP call).
    await policiesBeforeLookup(call, caller, deps);
    return await runOnceWith(
      deps.idempotency,
      {
        key,
        scope: idempotencyScope(caller.caller),
        fingerprint: toolFingerprint(call, caller),
        envelopeId: null,
        leaseMs: attemptLeaseMs(caller, deps.config),
      },
      // The limits inside the attempt: a replay or a conflict costs no quota, a refusal is not kept.
      () => limited(call, caller, deps, () => ranOrRefusedByErp(call, caller, deps)),
      toolKeeping(call),
    );
  } catch (error) {
    return failedRun(call, caller.erp, error);
  }
}
