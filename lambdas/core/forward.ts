/**
 * @module core/forward
 * What each endpoint does once the caller is authenticated and licensed: validate, apply the
 * target policy, call the ERP within the time budget, and shape the answer. Knows nothing of
 * Middy; handlers compose it.
 */

import type { Config } from '../platform/config.ts';
import type { CallContext, ErpCall, ErpTransport } from '../upstream/erp-transport.ts';
import { type CompiledTargetPolicy, checkTarget } from '../upstream/target-policy.ts';
import { upstreamTimeoutMs } from '../upstream/time-budget.ts';
import type { VersionClient } from '../upstream/version-client.ts';
import { type LambdaResponse, outcomeResponse } from './envelope.ts';
import type { InboundBody, InboundCall } from './inbound-call.ts';
import type { RequestState } from './request-state.ts';
import { parseV1Call, parseV2Call, parseVersionTarget } from './requests.ts';

/** Compressed responses may carry roughly ten times more JSON; memory still bounds the read. */
const COMPRESSED_READ_FACTOR = 10;
const COMPRESSED_READ_CEILING_BYTES = 64 * 1024 * 1024;

/** What every endpoint needs: the limits of the configuration and the target policy. */
interface ForwardBase {
  readonly config: Config;
  readonly policy: CompiledTargetPolicy;
}

/** What {@link forwardV1} needs: each function builds only its own endpoint's transport. */
export interface V1ForwardDeps extends ForwardBase {
  readonly v1: ErpTransport;
}

export interface V2ForwardDeps extends ForwardBase {
  readonly v2: ErpTransport;
}

export interface VersionForwardDeps extends ForwardBase {
  readonly versions: VersionClient;
}

/** All three: what the local server, which serves every endpoint, builds. */
export interface ForwardDeps extends V1ForwardDeps, V2ForwardDeps, VersionForwardDeps {}

/**
 * Runs `call` with the request's call context: its time budget, size limit and client identity,
 * computed once. One signal serves the whole request, so every upstream exchange of it shares
 * the budget; its timer is cleared as soon as the call settles (`AbortSignal.timeout` would keep
 * a timer and a weak reference alive per request for the whole budget: tens of thousands of
 * them under load, each a little more work for the garbage collector).
 */
export async function withCallContext<T>(
  inbound: InboundCall,
  state: RequestState,
  config: Config,
  call: (callContext: CallContext) => Promise<T>,
): Promise<T> {
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
  try {
    return await call({
      signal: deadline.signal,
      timeoutMs,
      maxResponseBytes: compressed
        ? Math.min(config.maxResponseBytes * COMPRESSED_READ_FACTOR, COMPRESSED_READ_CEILING_BYTES)
        : config.maxResponseBytes,
      compressedResponse: compressed,
      clientIp: inbound.sourceIp,
      stripDebug: config.stripDebug,
      ...(inbound.answerLease ? { answerLease: inbound.answerLease } : {}),
      state,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Validation, target policy, the call, the envelope: the same steps for both execute APIs. */
async function forwardExecute(
  parse: (body: InboundBody, state: RequestState, presentedProxyKey: string | undefined) => ErpCall,
  transport: ErpTransport,
  inbound: InboundCall,
  state: RequestState,
  deps: ForwardBase,
): Promise<LambdaResponse> {
  const call = parse(inbound.body, state, inbound.presentedProxyKey);
  checkTarget(deps.policy, call.baseUrl, call.db);
  const outcome = await withCallContext(inbound, state, deps.config, (callCtx) =>
    transport.call(call, callCtx),
  );
  return outcomeResponse(state, outcome);
}

/** `POST /api/erp/execute`: a v1 call over `/jsonrpc` execute_kw. */
export function forwardV1(
  inbound: InboundCall,
  state: RequestState,
  deps: V1ForwardDeps,
): Promise<LambdaResponse> {
  return forwardExecute(parseV1Call, deps.v1, inbound, state, deps);
}

/** `POST /v2/erp/execute`: a v2 call over JSON-2. */
export function forwardV2(
  inbound: InboundCall,
  state: RequestState,
  deps: V2ForwardDeps,
): Promise<LambdaResponse> {
  return forwardExecute(parseV2Call, deps.v2, inbound, state, deps);
}

/** The version endpoints: the target's version, through `/web/version` or `common.version`. */
export async function forwardVersion(
  inbound: InboundCall,
  state: RequestState,
  deps: VersionForwardDeps,
): Promise<LambdaResponse> {
  const target = parseVersionTarget(inbound.body, state);
  checkTarget(deps.policy, target);
  const version = await withCallContext(inbound, state, deps.config, (callCtx) =>
    deps.versions.version(target, { ...callCtx, readOnly: true }),
  );
  return outcomeResponse(state, { kind: 'result', value: version });
}
