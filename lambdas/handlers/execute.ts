/**
 * @module handlers/execute
 * The two execute functions, written once: `POST /api/erp/execute` (alias `/v1/erp/execute`) and
 * `POST /v2/erp/execute` differ only in their API, the transport they route through and the
 * forward of `core/forward.ts` they call. `executeFunction` builds a function's runtime factory,
 * handler factory and Lambda handler from one {@link ExecuteEndpoint}; `execute-v1.ts` and
 * `execute-v2.ts` are the entry points the stack bundles (one file per function), each naming its
 * endpoint. Each endpoint is a plain constant, so a function's bundle carries only its own
 * endpoint's transport (test/infra/bundle.test.ts).
 */

import { erpAddresses } from '../core/brakes-addresses.ts';
import type { Answer } from '../core/envelope.ts';
import { type ForwardDeps, forwardV1, forwardV2 } from '../core/forward.ts';
import type { ExecuteCall } from '../core/inbound-call.ts';
import { toExecuteCall } from '../middleware/inbound-edge.ts';
import type { Config } from '../platform/config.ts';
import type { ErpTransport } from '../upstream/erp-transport.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { V1Router, V2Router } from '../upstream/transport-routing.ts';
import { bodyChain, lambdaHandler } from './chain.ts';
import type { BaseRuntime, RuntimeOverrides } from './runtime-base.ts';
import { createStateRuntime, limitsDeps, type StateRuntime } from './runtime-state.ts';
import { createForwardingRuntime, routingDeps, type Upstream, v1RoutingDeps } from './runtime-upstream.ts';

/** The execute APIs: each names its transport in the forward's dependencies (`v1`, `v2`). */
export type ExecuteApi = 'v1' | 'v2';

/** What the forward of `api` needs: the execute parts and that API's transport only. */
export type ExecuteDeps<A extends ExecuteApi> = Omit<ForwardDeps, ExecuteApi | 'versions'> &
  Readonly<Record<A, ErpTransport>>;

/** A function's own runtime: the base parts, the state store and its forward's dependencies. */
export interface ExecuteRuntime<A extends ExecuteApi> extends BaseRuntime, StateRuntime {
  readonly forward: ExecuteDeps<A>;
}

/** What sets one execute function apart from the other. */
export interface ExecuteEndpoint<A extends ExecuteApi> {
  readonly api: A;
  /** The API's transport over the upstream's HTTP client, as the forward's dependencies name it. */
  readonly transport: (config: Config, upstream: Upstream) => Readonly<Record<A, ErpTransport>>;
  readonly forward: (inbound: ExecuteCall, deps: ExecuteDeps<A>) => Promise<Answer>;
}

/** v1: `/jsonrpc` execute_kw, or translated to JSON-2 (`ERP_V1_TRANSPORT`). */
export const EXECUTE_V1: ExecuteEndpoint<'v1'> = {
  api: 'v1',
  transport: (config, upstream) => ({ v1: new V1Router(config.v1Transport, v1RoutingDeps(upstream)) }),
  forward: forwardV1,
};

/** v2: JSON-2 (ERP 19 and later), or `/jsonrpc` execute_kw to ERP 16-18 (`ERP_V2_TRANSPORT`). */
export const EXECUTE_V2: ExecuteEndpoint<'v2'> = {
  api: 'v2',
  transport: (config, upstream) => ({ v2: new V2Router(config.v2Transport, routingDeps(upstream)) }),
  forward: forwardV2,
};

/**
 * The execute function of `endpoint`: `createRuntime` (the function's own runtime: the base parts
 * and its API's transport over one HTTP client), `createHandler` (the chain, then the endpoint's
 * forward) and the Lambda `handler`.
 */
export function executeFunction<A extends ExecuteApi>(endpoint: ExecuteEndpoint<A>) {
  const createRuntime = (
    config: Config,
    overrides: RuntimeOverrides = {},
  ): ExecuteRuntime<A> & { readonly http: HttpClient } => {
    const state = createStateRuntime(config, overrides);
    return {
      ...createForwardingRuntime(config, overrides, (upstream) => ({
        ...endpoint.transport(config, upstream),
        idempotency: state.idempotency,
      })),
      ...state,
    };
  };
  const createHandler = (runtime: ExecuteRuntime<A>) => {
    const deps = {
      ...runtime.forward,
      limits: limitsDeps(runtime),
      audit: runtime.audit,
      brakes: runtime.brakes,
      brakesAddresses: erpAddresses(runtime.forward.lookup),
    };
    return bodyChain(runtime, endpoint.api).handler((event, known, context) =>
      endpoint.forward(toExecuteCall(event, context, known), deps),
    );
  };
  return { createRuntime, createHandler, handler: lambdaHandler(createRuntime, createHandler) };
}
