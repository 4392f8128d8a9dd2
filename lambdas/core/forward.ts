/**
 * @module core/forward
 * What each endpoint does once the caller is authenticated and licensed: validate, apply the
 * target policy and the caller key's own policy, call the ERP within the time budget, and shape
 * the answer. Knows nothing of
 * Middy; handlers compose it.
 */

import type { Config } from '../platform/config.ts';
import { ProxyError } from '../platform/errors.ts';
import type { OmitMember } from '../platform/json.ts';
import { isReadMethod, type KeyPolicy } from '../platform/key-policy.ts';
import {
  type CallContext,
  type ErpCall,
  type ErpOutcome,
  type ErpTransport,
  type UpstreamFacts,
  UpstreamMeter,
} from '../upstream/erp-transport.ts';
import { type CompiledTargetPolicy, checkTarget } from '../upstream/target-policy.ts';
import { upstreamTimeoutMs } from '../upstream/time-budget.ts';
import type { VersionClient } from '../upstream/version-client.ts';
import { type Answer, outcomeResponse } from './envelope.ts';
import {
  attemptLeaseMs,
  checkIdempotencyKey,
  fingerprintOf,
  type IdempotencyDeps,
  idempotencyScope,
  runOnce,
} from './idempotency.ts';
import type { ExecuteCall, InboundBody, InboundCall } from './inbound-call.ts';
import { checkKeyPolicy } from './key-policy-check.ts';
import { type Admission, admitCall, type LimitsDeps, limitsApply } from './limits-check.ts';
import { type FactSheet, withFacts } from './request-facts.ts';
import { callFacts, parseV1Call, parseV2Call, parseVersionTarget, targetFacts } from './requests.ts';
import { withV1DomainHint } from './v1-domain-hint.ts';

/** Compressed responses may carry roughly ten times more JSON; memory still bounds the read. */
const COMPRESSED_READ_FACTOR = 10;
const COMPRESSED_READ_CEILING_BYTES = 64 * 1024 * 1024;

/** What every endpoint needs: the limits of the configuration and the target policy. */
interface ForwardBase {
  readonly config: Config;
  readonly policy: CompiledTargetPolicy;
}

/** What both execute endpoints need besides: the idempotency store (README, "Retrying writes safely") and the limits (README, "Limits"). */
interface ExecuteBase extends ForwardBase {
  readonly idempotency: IdempotencyDeps;
  /** The store and `ERP_TARGET_LIMITS`; `undefined`: no limits are checked (tests of other parts). */
  readonly limits?: LimitsDeps;
}

/** What {@link forwardV1} needs: each function builds only its own endpoint's transport. */
export interface V1ForwardDeps extends ExecuteBase {
  readonly v1: ErpTransport;
}

export interface V2ForwardDeps extends ExecuteBase {
  readonly v2: ErpTransport;
}

export interface VersionForwardDeps extends ForwardBase {
  readonly versions: VersionClient;
}

/** All three: what the local server, which serves every endpoint, builds. */
export interface ForwardDeps extends V1ForwardDeps, V2ForwardDeps, VersionForwardDeps {}

/** What a call returned, and what its upstream exchanges add up to. */
export interface Metered<T> {
  readonly value: T;
  readonly upstream: UpstreamFacts;
}

/**
 * Runs `call` with the request's call context: its time budget, size limit and client identity,
 * computed once. One signal serves the whole request, so every upstream exchange of it shares
 * the budget; its timer is cleared as soon as the call settles (`AbortSignal.timeout` would keep
 * a timer and a weak reference alive per request for the whole budget: tens of thousands of
 * them under load, each a little more work for the garbage collector). The upstream facts (status,
 * time, protocol) come back with the value, or ride on the error it throws. `stripDebug` is the
 * execute APIs' `ERP_STRIP_DEBUG`: only their answers carry the ERP's error data (the version
 * endpoints and the MCP tools never do, so their functions do not read the setting).
 */
export async function withCallContext<T>(
  inbound: InboundCall,
  config: Config,
  call: (callContext: CallContext) => Promise<T>,
  stripDebug = false,
): Promise<Metered<T>> {
  const remaining = inbound.remainingMs?.();
  const timeoutMs = upstreamTimeoutMs({
    header: inbound.requestTimeout,
    defaultSeconds: config.defaultTimeoutSeconds,
    maxSeconds: config.maxTimeoutSeconds,
    remainingMs: remaining,
  });
  const compressed = inbound.responseEncoding !== undefined;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The upstream time budget is spent.', 'TimeoutError')),
    timeoutMs,
  );
  const meter = new UpstreamMeter();
  try {
    const value = await call({
      signal: deadline.signal,
      timeoutMs,
      maxResponseBytes: compressed
        ? Math.min(config.maxResponseBytes * COMPRESSED_READ_FACTOR, COMPRESSED_READ_CEILING_BYTES)
        : config.maxResponseBytes,
      compressedResponse: compressed,
      clientIp: inbound.sourceIp,
      stripDebug,
      ...(inbound.answerLease ? { answerLease: inbound.answerLease } : {}),
      meter,
    });
    return { value, upstream: meter.facts() };
  } catch (error) {
    throw withFacts(error, meter.facts());
  } finally {
    clearTimeout(timer);
  }
}

/** One ERP call as the policies see it: the model and method exactly as they will be sent, the target and the database. */
export interface CallQuestion {
  readonly model?: string;
  readonly method: string;
  readonly target: URL;
  readonly db: string;
}

/**
 * The policies of one ERP call, before any ERP traffic and before the idempotency lookup (a replay
 * is never served to a key that may no longer make the call): the proxy's target policy
 * (`ERP_ALLOWED_*`), then the caller key's own (README, "Key policies"). Execute asks them once
 * per call; an MCP write tool with an `idempotency_key` asks them before its lookup (its ERP
 * access asks them again on each ERP call). Rejects, rather than throws, only when the key's
 * targets need a DNS lookup.
 */
export function checkCallPolicies(
  policy: CompiledTargetPolicy,
  keyPolicy: KeyPolicy | undefined,
  question: CallQuestion,
): void | Promise<void> {
  checkTarget(policy, question.target, question.db);
  return checkKeyPolicy(keyPolicy, question);
}

/** How long an in-flight slot is leased when the function's time left is unknown (tests, a bare handler). */
const FALLBACK_LEASE_HEADROOM_MS = 3_000;

/**
 * Counts the call against its limits (README, "Limits"), right before its first ERP request:
 * `undefined` when none applies or the endpoint has none. The slot's lease is the function's time
 * left, so a slot held by an instance that died is free within the function's timeout.
 */
export function admitToErp(
  inbound: InboundCall,
  target: URL,
  limits: LimitsDeps | undefined,
  config: Config,
): Promise<Admission | undefined> | undefined {
  if (limits === undefined) return undefined;
  const leaseMs = inbound.remainingMs?.() ?? config.maxTimeoutSeconds * 1000 + FALLBACK_LEASE_HEADROOM_MS;
  return admitCall(limits, inbound, target, leaseMs);
}

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
): Promise<Answer> {
  const { value: outcome, upstream } = await withCallContext(
    inbound,
    deps.config,
    (callCtx) => transport.call(call, callCtx),
    deps.config.stripDebug,
  );
  const answer = outcomeResponse(inbound.envelopeId, api.explain ? api.explain(call, outcome) : outcome);
  // Object.assign, not a spread of three objects: on Node 20 the spread costs microseconds.
  return { response: answer.response, facts: Object.assign(learned, upstream, answer.facts) };
}

/**
 * Validation, target policy, the limits, the call, the envelope: the same steps for both execute
 * APIs. The answer's facts are the call's (action, model, target), the upstream's and the
 * envelope's; an error thrown after the body was parsed carries those learned before it. A write
 * with an `Idempotency-Key` runs through the idempotency lookup after the policies (a replay is
 * never served to a key that may no longer make the call) and before the limits and the ERP
 * (README, "Retrying writes safely"): a replay or a conflict costs no quota, and a 429 is never
 * recorded (the call did not run). Every answer of a call rate limits counted (an error's too)
 * carries their `RateLimit-Policy` and `RateLimit`.
 */
async function forwardExecute(
  api: ExecuteApi,
  transport: ErpTransport,
  inbound: ExecuteCall,
  deps: ExecuteBase,
): Promise<Answer> {
  const call = api.parse(inbound.body, inbound.presentedProxyKey);
  const learned = callFacts(call);
  /** This request's `RateLimit-*` headers, when it was counted (never a replay's: it costs no quota). */
  let rateHeaders: Readonly<Record<string, string>> | undefined;
  try {
    const idempotencyKey = checkIdempotencyKey(inbound.idempotencyKey);
    const pending = checkCallPolicies(deps.policy, inbound.keyPolicy, {
      model: call.model,
      method: call.method,
      target: call.baseUrl,
      db: call.db,
    });
    if (pending !== undefined) await pending;
    // Reads are not recorded: replaying them buys nothing, and they can be megabytes.
    const once = idempotencyKey !== undefined && !isReadMethod(call.method);
    if (!once && (deps.limits === undefined || !limitsApply(deps.limits, inbound, call.baseUrl))) {
      // No key and no limit that applies: no idempotency or limits work at all, not even a
      // closure or a promise of their own (the handler overhead's budget, BENCHMARKS.md).
      return await erpAnswer(api, transport, inbound, deps, call, learned);
    }
    const send = async (): Promise<Answer> => {
      // The limits, right before the first ERP request (after the idempotency lookup).
      const admission = await admitToErp(inbound, call.baseUrl, deps.limits, deps.config);
      if (admission !== undefined) {
        Object.assign(learned, admission.facts);
        rateHeaders = admission.headers;
      }
      try {
        return await erpAnswer(api, transport, inbound, deps, call, learned);
      } finally {
        // The call's last ERP request is over: its in-flight slot is free for the next.
        if (admission !== undefined) await admission.release();
      }
    };
    /** The answer with this request's own rate headers (added after a kept answer is recorded). */
    const withRateHeaders = (answer: Answer): Answer => {
      if (rateHeaders !== undefined) Object.assign(answer.response.headers, rateHeaders);
      return answer;
    };
    if (!once) return withRateHeaders(await send());
    const answer = await runOnce(
      deps.idempotency,
      {
        // `once` implies a key (TypeScript does not follow it through the boolean).
        key: idempotencyKey as string,
        scope: idempotencyScope(inbound.caller),
        fingerprint: fingerprintOf(
          api.route,
          inbound.body.ok ? inbound.body.members : new Map(),
          api.ignored,
        ),
        envelopeId: inbound.envelopeId,
        leaseMs: attemptLeaseMs(inbound, deps.config),
      },
      send,
    );
    return withRateHeaders({ response: answer.response, facts: Object.assign(learned, answer.facts) });
  } catch (error) {
    // A call counted, then failed (-32003, -32004...): its answer carries the limits' headers too
    // (added here, after the idempotency record, which never keeps them).
    if (rateHeaders !== undefined && error instanceof ProxyError) error.withHeaders(rateHeaders);
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
    checkTarget(deps.policy, target);
    const pending = checkKeyPolicy(inbound.keyPolicy, { target });
    if (pending !== undefined) await pending;
    const { value: version, upstream } = await withCallContext(inbound, deps.config, (callCtx) =>
      deps.versions.version(target, { ...callCtx, readOnly: true }),
    );
    const answer = outcomeResponse(inbound.envelopeId, { kind: 'result', value: version });
    return { response: answer.response, facts: Object.assign(learned, upstream, answer.facts) };
  } catch (error) {
    throw withFacts(error, learned);
  }
}
