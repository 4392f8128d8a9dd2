/**
 * @module core/mcp/run-tool
 * One tool call against the ERP, once the protocol layer has found the tool and checked its
 * arguments: a function from the call and its request to a {@link ToolRun} value, the tool's
 * outcome with what the request log and metrics learn of it (docs/design.md, "The tools/call
 * pipeline"). The call's question (the tool, its model and method, the request's ERP connection)
 * goes through the gate (core/gate.ts), as an execute call's does. At the policy step, after the
 * target and database rules, the tool declares its ERP requests (core/mcp/tool-requests.ts: its
 * lookups read in a time budget of their own) and the key's rules rule on each as on an execute
 * call's request ({@link ErpAccess.rule}); then the idempotency lookup of a write tool's
 * `idempotency_key`, the confirmation, the limits, and the tool's run, which sends only the
 * requests as they were ruled. Every failure becomes the tool's error result (core/mcp/answers.ts).
 *
 * It takes and returns plain values: the protocol layer (protocol/mcp/) turns the outcome into an
 * MCP result of its revision, and the facts into the request's.
 */
import { PROXY_ERRORS } from '../../platform/error-table.ts';
import { InternalError, KeyPolicyRefusedError, ProxyError } from '../../platform/errors.ts';
import { isReadMethod } from '../../platform/key-policy.ts';
import type { UpstreamFacts } from '../../upstream/erp-transport.ts';
import type { AuditSubject } from '../audit/audit-call.ts';
import { CREATING_METHODS, createdIdsOf } from '../audit/call-content.ts';
import { type PinnedErp, withCallContext, withLazyCallContext } from '../call-context.ts';
import { checkConfirmable } from '../confirm/form.ts';
import { type CallQuestion, type GateCall, type Once, passGate } from '../gate.ts';
import {
  attemptLeaseMs,
  certainlyDidNotRun,
  fingerprintOf,
  idempotencyScope,
  type Keeping,
  keptValue,
  keptValueBytes,
} from '../idempotency.ts';
import { hasContentRules } from '../policy/call-rules.ts';
import { callWrites } from '../policy/call-writes.ts';
import { companyDatabaseRefusal } from '../policy/company-rule.ts';
import { checkToolContexts } from '../policy/unreadable.ts';
import { factsOf, learnedBefore, type RequestFacts } from '../request-facts.ts';
import { erpFailure, failureJson, proxyFailure, type ToolAnswer, type ToolFailure } from './answers.ts';
import { toolConfirmation } from './confirm-tool.ts';
import {
  erpConnection,
  erpDatabase,
  erpUrl,
  inConnectionWords,
  type McpErp,
  type McpInbound,
} from './connection.ts';
import {
  type DeclaredRequests,
  ErpAccess,
  ErpCallError,
  type McpDeps,
  NOTHING_DECLARED,
  type RuledRequest,
} from './erp-access.ts';
import { namedLookups, type ToolRequest } from './tool-requests.ts';
import type { ToolCall, ToolRun } from './tool-run.ts';
import { needsConfirmation } from './write-tools.ts';

export type { ConfirmationAnswer, ToolCall, ToolOutcome, ToolRun } from './tool-run.ts';

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
  if (error instanceof ErpCallError) {
    const name = (error.data as { readonly name?: unknown } | null | undefined)?.name;
    const named = typeof name === 'string' ? { ...facts, erpException: name.slice(0, 200) } : facts;
    return failed(named, erpFailure(error.code, error.erpMessage, error.data, error.erpVersion), erp);
  }
  // A policy refusal's advice names whose policy it is: the key's, or the identity-map entry's.
  const identity = erp.from === 'identity' ? erp.identity : undefined;
  // A bug found on the way (a tool sending a method its declaration does not allow): logged too.
  if (error instanceof InternalError)
    return failed({ ...facts, internalError: error.cause ?? error }, proxyFailure(error, readOnly), erp);
  if (error instanceof ProxyError) return failed(facts, proxyFailure(error, readOnly, identity), erp);
  // A bug: logged with its stack (observe reads it), shown as -32603 without details.
  return failed({ ...facts, internalError: error }, proxyFailure(new InternalError(error), readOnly), erp);
}

/**
 * The tool's ERP calls within the request's time budget, its declared requests as ruled (connecting
 * where the limits pinned the call, if they did): its answer and all it learned.
 */
async function ranOnErp(
  call: ToolCall,
  request: McpInbound,
  deps: McpDeps,
  declared: DeclaredRequests,
  looked: UpstreamFacts | undefined,
  pinned: PinnedErp | undefined,
): Promise<ToolRun> {
  const { value, upstream } = await withCallContext(
    request,
    deps.config,
    (context) =>
      call.tool.run(
        call.args as never,
        new ErpAccess(request, deps, context, call.tool, declared),
        declared.requests,
      ),
    false,
    looked,
    pinned,
  );
  const { facts, ...answer } = value;
  return {
    outcome: { ok: true, answer },
    facts: { tool: call.tool.name, ...facts, ...upstream, outcome: 'success' },
  };
}

/** The method a tool's requests are sent with, when it has one (`call_method`: its own). */
function methodOf(call: ToolCall): string | undefined {
  const args = call.args as { readonly method?: unknown };
  return call.tool.name === 'call_method' && typeof args.method === 'string' ? args.method : call.tool.method;
}

/**
 * The call's `idempotency_key` when it applies: a tool that writes, calling a method outside the
 * read list (a `call_method` of `name_search` only reads: not recorded, as on execute).
 */
function idempotencyKeyOf(call: ToolCall): string | undefined {
  const key = (call.args as { readonly idempotency_key?: unknown }).idempotency_key;
  if (typeof key !== 'string' || !toolWrites(call)) return undefined;
  return key;
}

/**
 * Whether a tool call can write: a write tool, but a `call_method` of a method on the read list
 * that does not write (core/policy/call-writes.ts, as on execute: an `export_data` asking for
 * external ids writes).
 */
function toolWrites(call: ToolCall): boolean {
  if (!call.tool.writes) return false;
  const method = methodOf(call) ?? call.tool.name;
  if (call.tool.name !== 'call_method' || !isReadMethod(method)) return !isReadMethod(method);
  const args = call.args as { readonly args?: unknown; readonly kwargs?: unknown };
  return callWrites({
    method,
    ...(args.args === undefined ? {} : { argsJson: JSON.stringify(args.args) }),
    ...(args.kwargs === undefined ? {} : { kwargsJson: JSON.stringify(args.kwargs) }),
  });
}

/**
 * The fingerprint of a tool call: the tool, its arguments without `idempotency_key`, and the
 * caller's ERP connection (the same arguments against another ERP or user are another request).
 */
function toolFingerprint(call: ToolCall, request: McpInbound): string {
  const { idempotency_key: _key, ...args } = call.args as Record<string, unknown>;
  return fingerprintOf(
    `mcp ${call.tool.name}`,
    new Map([
      ['arguments', JSON.stringify(args)],
      ['erp', JSON.stringify(request.erp)],
    ]),
  );
}

/**
 * The gate's question of a tool call, with its facts for the log line: the tool, the model it
 * names, the method its requests are sent with when it has one (`call_method`: its own; asked
 * before any lookup of its declaration), and the request's ERP connection
 * (the `x-erp-*` headers, checked, or the OAuth identity's), known before it runs. `erp_version`
 * needs the URL alone (the database when given). Each ERP request the tool declares is asked
 * again with its own model and method ({@link declaredRequests}).
 */
function toolQuestion(
  call: ToolCall,
  request: McpInbound,
): { readonly question: CallQuestion; readonly facts: RequestFacts } {
  const { model } = call.args as { readonly model?: unknown };
  const connection =
    call.tool.needs === 'url' ? undefined : erpConnection(request.erp, request.presentedProxyKey);
  const target = connection?.baseUrl ?? erpUrl(request.erp);
  const db = connection === undefined ? erpDatabase(request.erp) : connection.db;
  const method = methodOf(call);
  const question: CallQuestion = {
    api: 'mcp',
    tool: call.tool,
    target,
    ...(db === undefined ? {} : { db }),
    ...(typeof model === 'string' ? { model } : {}),
    ...(method === undefined ? {} : { method }),
  };
  const facts: RequestFacts = {
    tool: call.tool.name,
    erpHost: target.host,
    ...(db === undefined ? {} : { erpDb: db }),
    ...(typeof model === 'string' ? { model } : {}),
    ...(method === undefined ? {} : { action: method }),
  };
  return { question, facts };
}

/**
 * The policy step's rules that read a tool call's arguments, for a key with content rules: a tool
 * call to a database the key's companies do not name, with a context the proxy cannot read
 * (core/policy/unreadable.ts), or that a person would confirm without seeing all of it
 * (core/confirm/form.ts), is refused before it is confirmed or counted.
 */
function checkToolArguments(call: ToolCall, request: McpInbound, question: CallQuestion): void {
  const policy = request.keyPolicy;
  if (!hasContentRules(policy)) return;
  const { db } = question;
  if (policy.companies !== undefined && db !== undefined && !policy.companies.has(db))
    throw companyDatabaseRefusal(db);
  const confirmed = needsConfirmation(policy, call.tool, call.args);
  checkToolContexts(policy, call.args, confirmed);
  if (confirmed) checkConfirmable(call.tool.name, call.args as Readonly<Record<string, unknown>>);
}

/**
 * The tool's declaration, ruled (docs/design.md, "The order of checks"): its lookups, then the
 * key's rules on each ERP request it declares, in order, as execute's request is ruled. Throws the
 * first refusal, with the facts of the request it refused.
 */
export async function declaredRequests(call: ToolCall, access: ErpAccess): Promise<DeclaredRequests> {
  const { tool } = call;
  const requests = await tool.declare(call.args as never, namedLookups(access, tool.lookups, tool.name));
  const ruled = new Map<ToolRequest, RuledRequest>();
  const refused = new Map<ToolRequest, unknown>();
  for (const declared of requests) {
    try {
      ruled.set(declared, await access.rule(declared));
    } catch (refusal) {
      // A conditional request's refusal waits for the run to need it.
      if (declared.conditional !== true || !(refusal instanceof KeyPolicyRefusedError)) throw refusal;
      refused.set(declared, refusal);
    }
  }
  const looked = access.versionRead();
  return { requests, ruled, refused, version: looked === undefined ? undefined : await looked };
}

/**
 * The policy step's last rules on a tool call: the checks of its arguments, then its declared
 * requests ruled in a time budget of their own; the gate's call goes on with them as its
 * requests, and a run that sends them as ruled.
 */
async function ruledTool(
  call: ToolCall,
  request: McpInbound,
  deps: McpDeps,
  gateCall: GateCall<ToolRun>,
): Promise<GateCall<ToolRun>> {
  checkToolArguments(call, request, gateCall.question);
  // A time budget of its own, opened only if a lookup or a rule asks the ERP.
  const { value: declared, upstream } = await withLazyCallContext(request, deps.config, (context) =>
    declaredRequests(call, new ErpAccess(request, deps, context, call.tool)),
  );
  return {
    ...gateCall,
    requests: Array.from(declared.ruled.values(), (ruled) => ruled.call),
    // The lookups' upstream time adds up with the run's.
    run: (pinned) => ranOrRefusedByErp(call, request, deps, declared, upstream, pinned),
  };
}

/** What a tool's run means for its record (core/idempotency.ts): kept, forgotten, or unknown. */
function toolKeeping(call: ToolCall): Keeping<ToolRun> {
  return {
    judge(run) {
      // An asking round, the person's no, a refused state: the tool did not run, and no record is made.
      if (run.outcome.ok === 'confirmation') return { forget: true };
      if (run.outcome.ok) return { keep: keptValueBytes(run.outcome.answer) };
      // The ERP's own error rolled its transaction back; a proxy error may say the call did not run.
      if (run.facts.outcome === 'erp_error' || certainlyDidNotRun(run.facts.errorCode))
        return { forget: true };
      return { unknown: run.facts.errorCode ?? PROXY_ERRORS.internal.code };
    },
    replay(kept, rest, _envelopeId, replayOf) {
      const read = keptValue(kept, rest);
      if (read === undefined) return undefined;
      return {
        outcome: { ok: true, answer: read.value as Omit<ToolAnswer, 'facts'> },
        facts: {
          tool: call.tool.name,
          outcome: 'success',
          idempotency: 'replayed',
          ...(replayOf === undefined ? {} : { auditReplayOf: replayOf }),
        },
      };
    },
    noted: (run, idempotency) => ({ outcome: run.outcome, facts: { ...run.facts, idempotency } }),
  };
}

/** The tool's run; the ERP's own refusal as its outcome (nothing changed), anything else thrown. */
async function ranOrRefusedByErp(
  call: ToolCall,
  request: McpInbound,
  deps: McpDeps,
  declared: DeclaredRequests,
  looked?: UpstreamFacts,
  pinned?: PinnedErp,
): Promise<ToolRun> {
  try {
    return await ranOnErp(call, request, deps, declared, looked, pinned);
  } catch (error) {
    if (error instanceof ErpCallError) return failedRun(call, request.erp, error);
    throw error;
  }
}

/** A write tool's idempotency at the gate; `undefined` without an `idempotency_key`, or for a call that only reads. */
function toolOnce(call: ToolCall, request: McpInbound, deps: McpDeps): Once<ToolRun> | undefined {
  const key = idempotencyKeyOf(call);
  if (key === undefined) return undefined;
  return {
    call: {
      key,
      scope: idempotencyScope(request.identity),
      fingerprint: toolFingerprint(call, request),
      envelopeId: null,
      leaseMs: attemptLeaseMs(request, deps.config),
      storeMeter: request.storeMeter,
    },
    keeping: toolKeeping(call),
  };
}

/** The new ids a `create` tool's answer gave, or a `call_method` of `create` or `copy`. */
function createdByTool(call: ToolCall, run: ToolRun): readonly number[] | undefined {
  if (!CREATING_METHODS.has(methodOf(call) ?? call.tool.name) || run.outcome.ok !== true) return undefined;
  try {
    return createdIdsOf(JSON.parse(run.outcome.answer.json));
  } catch {
    return undefined;
  }
}

/** A tool call's audit (core/audit/audit-call.ts); `undefined` for a call that only reads (as its idempotency). */
function toolAudit(call: ToolCall, request: McpInbound): AuditSubject<ToolRun> | undefined {
  if (!toolWrites(call)) return undefined;
  const connection = erpConnection(request.erp, request.presentedProxyKey);
  const key = idempotencyKeyOf(call);
  return {
    api: 'mcp',
    tool: call.tool.name,
    ...(call.client === undefined ? {} : { client: call.client }),
    erp: { url: connection.baseUrl, db: connection.db, uid: connection.uid, apiKey: connection.apiKey },
    ...(request.requestId === undefined ? {} : { requestId: request.requestId }),
    ...(request.trace === undefined ? {} : { traceId: request.trace.traceId }),
    storeMeter: request.storeMeter,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    factsOf: (run) => run.facts,
    createdIds: (run) => createdByTool(call, run),
  };
}

/**
 * Runs one tool (its arguments checked) for `request`, through the gate (core/gate.ts); every
 * failure becomes its outcome, so it never throws. A replay of an idempotent write, -32010, -32011
 * or "outcome unknown" comes back as the tool's outcome; a refusal (the policies, the limits) as
 * its error, with the facts learned before it.
 */
export async function runTool(call: ToolCall, request: McpInbound, deps: McpDeps): Promise<ToolRun> {
  try {
    const { question, facts } = toolQuestion(call, request);
    const passed = await learnedBefore(facts, () =>
      passGate(
        {
          inbound: request,
          question,
          once: toolOnce(call, request, deps),
          audit: toolAudit(call, request),
          confirm: toolConfirmation(call, request, deps, (error) => failedRun(call, request.erp, error)),
          // Until the policy step has ruled on its declaration, the run may send nothing.
          run: (pinned) => ranOrRefusedByErp(call, request, deps, NOTHING_DECLARED, undefined, pinned),
          rule: (gateCall) => ruledTool(call, request, deps, gateCall),
        },
        deps,
      ),
    );
    const run = passed.value;
    return passed.facts === undefined
      ? run
      : { outcome: run.outcome, facts: { ...run.facts, ...passed.facts } };
  } catch (error) {
    return failedRun(call, request.erp, error);
  }
}
