/**
 * @module core/forward
 * What each endpoint does once the caller is authenticated and licensed: validate, pass the
 * call through the gate (core/gate.ts: the policies, the idempotency lookup, the limits, the ERP
 * call within the time budget, the release, the record), and shape the answer. Knows nothing of
 * Middy; handlers compose it.
 */

import type { BrakesSource } from '../platform/brakes/brakes-source.ts';
import type { Config } from '../platform/config.ts';
import type { OmitMember } from '../platform/json.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import type { ErpCall, ErpOutcome, ErpTransport, UpstreamFacts } from '../upstream/erp-transport.ts';
import type { CompiledTargetPolicy, PolicyLookup } from '../upstream/target-policy.ts';
import type { VersionClient } from '../upstream/version-client.ts';
import type { AuditSubject } from './audit/audit-call.ts';
import { CREATING_METHODS, createdIdsOf } from './audit/call-content.ts';
import { brakeSubject, checkBrakes, type ErpAddresses } from './brakes-check.ts';
import { type PinnedErp, withCallContext } from './call-context.ts';
import { type Answer, outcomeResponse } from './envelope.ts';
import {
  type CallQuestion,
  checkCallPolicies,
  type GateCall,
  type GateDeps,
  type Once,
  passGate,
} from './gate.ts';
import {
  answerKeeping,
  attemptLeaseMs,
  checkIdempotencyKey,
  fingerprintOf,
  idempotencyScope,
} from './idempotency.ts';
import type { ExecuteCall, InboundBody, InboundCall } from './inbound-call.ts';
import { applyContentRules, hasContentRules } from './policy/call-rules.ts';
import { callWrites } from './policy/call-writes.ts';
import { erpFieldsOf } from './policy/erp-fields.ts';
import { type FactSheet, withFacts } from './request-facts.ts';
import { callFacts, parseV1Call, parseV2Call, parseVersionTarget, targetFacts } from './requests.ts';
import { withV1DomainHint } from './v1-domain-hint.ts';

/** What every endpoint needs: the limits of the configuration and the target policy. */
interface ForwardBase {
  readonly config: Config;
  readonly policy: CompiledTargetPolicy;
  /**
   * The target policy's connect-time lookup, the HTTP client's own: the limits resolve an ERP's
   * host name with it (handlers/runtime-state.ts); absent: `dns.lookup` under `policy`.
   */
  readonly lookup?: PolicyLookup;
}

/**
 * What both execute endpoints need besides: the gate's (core/gate.ts), the idempotency store
 * (README, "Retrying writes safely") and the limits (README, "Limits").
 */
interface ExecuteBase extends ForwardBase, GateDeps {}

/** What {@link forwardV1} needs: each function builds only its own endpoint's transport. */
export interface V1ForwardDeps extends ExecuteBase {
  readonly v1: ErpTransport;
}

export interface V2ForwardDeps extends ExecuteBase {
  readonly v2: ErpTransport;
}

export interface VersionForwardDeps extends ForwardBase {
  readonly versions: VersionClient;
  /** The instance's copy of the operators' brakes; `undefined`: none. */
  readonly brakes?: BrakesSource | undefined;
  /** Resolves a host name for an `erp` brake that names an address. */
  readonly brakesAddresses?: ErpAddresses | undefined;
}

/** All three: what the local server, which serves every endpoint, builds. */
export interface ForwardDeps extends V1ForwardDeps, V2ForwardDeps, VersionForwardDeps {}

/** How one execute API reads, fingerprints and answers its calls. */
interface ExecuteApi {
  /** The route of the fingerprint (`/api/erp/execute` and `/v1/erp/execute` are one). */
  readonly route: 'v1' | 'v2';
  readonly parse: (body: InboundBody, presentedProxyKey: string | undefined) => ErpCall;
  /** Body members the proxy ignores, left out of the fingerprint. */
  readonly ignored?: OmitMember;
  readonly explain?: (call: ErpCall, outcome: ErpOutcome) => ErpOutcome;
}

/**
 * The ERP call and its envelope, with the facts learned before it, the upstream's and the
 * envelope's: the last step of every execute call, with or without idempotency and limits.
 */
async function erpAnswer(
  api: ExecuteApi,
  transport: ErpTransport,
  inbound: InboundCall,
  deps: ExecuteBase,
  call: ErpCall,
  learned: FactSheet,
  filter?: (outcome: ErpOutcome) => ErpOutcome,
  looked?: UpstreamFacts,
  pinned?: PinnedErp,
): Promise<Answer> {
  const { value: sent, upstream } = await withCallContext(
    inbound,
    deps.config,
    (callCtx) => transport.call(call, callCtx),
    deps.config.stripDebug,
    looked,
    pinned,
  );
  // A key's denied fields leave the answer first (core/policy/answer-filter.ts).
  const outcome = filter === undefined ? sent : filter(sent);
  const answer = outcomeResponse(inbound.envelopeId, api.explain ? api.explain(call, outcome) : outcome);
  // Object.assign, not a spread of three objects: on Node 20 the spread costs microseconds.
  return { response: answer.response, facts: Object.assign(learned, upstream, answer.facts) };
}

/**
 * The key policy's `fields` and `companies` rules on an execute call, at the gate's policy step
 * (core/policy/call-rules.ts): the gate's call with the run of the call as it is sent (its context
 * set) and the filter of its answer. A `fields_get` lookup the field rule needs runs in a time
 * budget of its own, through the call's transport.
 */
async function ruledExecute(
  api: ExecuteApi,
  transport: ErpTransport,
  inbound: ExecuteCall,
  deps: ExecuteBase,
  call: ErpCall,
  learned: FactSheet,
  gateCall: GateCall<Answer>,
): Promise<GateCall<Answer>> {
  const policy = inbound.keyPolicy as KeyPolicy;
  const { value: ruled, upstream: looked } = await withCallContext(inbound, deps.config, (callCtx) =>
    applyContentRules(policy, call, erpFieldsOf(transport, call, callCtx)),
  );
  return {
    ...gateCall,
    requests: [ruled.call],
    // The lookups' upstream time adds up with the call's (the ERP's part of `Server-Timing`).
    run: (pinned) =>
      erpAnswer(api, transport, inbound, deps, ruled.call, learned, ruled.answer, looked, pinned),
  };
}

/** The question an execute call asks the policies: the model and method exactly as they will be sent. */
function questionOf(api: ExecuteApi, call: ErpCall): CallQuestion {
  return {
    api: api.route,
    model: call.model,
    method: call.method,
    writes: callWrites(call),
    target: call.baseUrl,
    db: call.db,
  };
}

/**
 * An execute write's idempotency at the gate (README, "Retrying writes safely"); `undefined` for a
 * call without an `Idempotency-Key`, and for a read (not recorded: replaying it buys nothing, and
 * it can be megabytes).
 */
function onceOf(
  api: ExecuteApi,
  inbound: ExecuteCall,
  deps: ExecuteBase,
  call: ErpCall,
  key: string | undefined,
): Once<Answer> | undefined {
  if (key === undefined || !callWrites(call)) return undefined;
  return {
    call: {
      key,
      scope: idempotencyScope(inbound.identity),
      fingerprint: fingerprintOf(api.route, inbound.body.ok ? inbound.body.members : new Map(), api.ignored),
      envelopeId: inbound.envelopeId,
      leaseMs: attemptLeaseMs(inbound, deps.config),
      storeMeter: inbound.storeMeter,
    },
    keeping: answerKeeping(inbound.envelopeId),
  };
}

/** The result of a JSON-RPC envelope's bytes (a create's new ids); `undefined` when it has none. */
function envelopeResult(answer: Answer): unknown {
  try {
    const { bodyBytes, body } = answer.response;
    const parsed: unknown = JSON.parse(bodyBytes === undefined ? body : bodyBytes.toString('utf8'));
    return parsed !== null && typeof parsed === 'object'
      ? (parsed as { result?: unknown }).result
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An execute write's audit (core/audit/audit-call.ts); `undefined` for a call that only reads
 * (the same predicate as its idempotency record).
 */
function auditOf(
  api: ExecuteApi,
  inbound: ExecuteCall,
  call: ErpCall,
  key: string | undefined,
): AuditSubject<Answer> | undefined {
  if (!callWrites(call)) return undefined;
  return {
    api: api.route,
    erp: { url: call.baseUrl, db: call.db, uid: call.uid, apiKey: call.apiKey },
    ...(inbound.requestId === undefined ? {} : { requestId: inbound.requestId }),
    ...(inbound.trace === undefined ? {} : { traceId: inbound.trace.traceId }),
    storeMeter: inbound.storeMeter,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    factsOf: (answer) => answer.facts,
    createdIds: (answer) =>
      CREATING_METHODS.has(call.method) && answer.facts.outcome === 'success'
        ? createdIdsOf(envelopeResult(answer))
        : undefined,
  };
}

/**
 * Validation, then the gate (core/gate.ts: the policies, the idempotency lookup, the limits, the
 * ERP call, the release, the record), then the envelope: the same steps for both execute APIs.
 * The answer's facts are the call's (action, model, target), the upstream's, the envelope's and
 * the gate's; an error thrown after the body was parsed carries those learned before it. The
 * answer of a counted call carries its `RateLimit-Policy` and `RateLimit`, added after its record
 * was written (a replay carries none: it was not counted).
 */
async function forwardExecute(
  api: ExecuteApi,
  transport: ErpTransport,
  inbound: ExecuteCall,
  deps: ExecuteBase,
): Promise<Answer> {
  const call = api.parse(inbound.body, inbound.presentedProxyKey);
  const learned = callFacts(call);
  try {
    const key = checkIdempotencyKey(inbound.idempotencyKey);
    const passed = await passGate(
      {
        inbound,
        question: questionOf(api, call),
        once: onceOf(api, inbound, deps, call, key),
        audit: auditOf(api, inbound, call, key),
        requests: [call],
        run: (pinned) =>
          erpAnswer(api, transport, inbound, deps, call, learned, undefined, undefined, pinned),
        rule: hasContentRules(inbound.keyPolicy)
          ? (gateCall) => ruledExecute(api, transport, inbound, deps, call, learned, gateCall)
          : undefined,
      },
      deps,
    );
    const { response, facts } = passed.value;
    if (passed.headers !== undefined) Object.assign(response.headers, passed.headers);
    // A replay's facts are its own; the ERP call's are `learned` already.
    if (facts !== learned) Object.assign(learned, facts);
    if (passed.facts !== undefined) Object.assign(learned, passed.facts);
    return { response, facts: learned };
  } catch (error) {
    throw withFacts(error, learned);
  }
}

const V1_API: ExecuteApi = { route: 'v1', parse: parseV1Call, explain: withV1DomainHint };
const V2_API: ExecuteApi = { route: 'v2', parse: parseV2Call };
/** v2 over JSON-2 only (`ERP_V2_TRANSPORT=json2`) never reads `erp_instance.user_id`. */
const V2_JSON2_API: ExecuteApi = {
  ...V2_API,
  ignored: (path) => path.length === 2 && path[0] === 'erp_instance' && path[1] === 'user_id',
};

/** `POST /api/erp/execute`: a v1 call over `/jsonrpc` execute_kw. */
export function forwardV1(inbound: ExecuteCall, deps: V1ForwardDeps): Promise<Answer> {
  return forwardExecute(V1_API, deps.v1, inbound, deps);
}

/** `POST /v2/erp/execute`: a v2 call over JSON-2. */
export function forwardV2(inbound: ExecuteCall, deps: V2ForwardDeps): Promise<Answer> {
  return forwardExecute(deps.config.v2Transport === 'json2' ? V2_JSON2_API : V2_API, deps.v2, inbound, deps);
}

/** The version endpoints: the target's version, through `/web/version` or `common.version`. */
export async function forwardVersion(inbound: InboundCall, deps: VersionForwardDeps): Promise<Answer> {
  const target = parseVersionTarget(inbound.body);
  const learned = targetFacts(target);
  try {
    // The policies as the gate asks them; no limits and no record: a version call reads nothing of the ERP's data.
    const pending = checkCallPolicies(deps.policy, inbound, { target });
    if (pending !== undefined) await pending;
    // The brakes after the policies, as the gate's step: an `all` brake of the caller, or of this ERP.
    if (deps.brakes !== undefined)
      await checkBrakes(
        deps.brakes,
        brakeSubject(inbound.identity, target, false),
        inbound.storeMeter,
        deps.brakesAddresses,
      );
    const { value: version, upstream } = await withCallContext(inbound, deps.config, (callCtx) =>
      deps.versions.version(target, { ...callCtx, readOnly: true }),
    );
    const answer = outcomeResponse(inbound.envelopeId, { kind: 'result', value: version });
    return { response: answer.response, facts: Object.assign(learned, upstream, answer.facts) };
  } catch (error) {
    throw withFacts(error, learned);
  }
}
