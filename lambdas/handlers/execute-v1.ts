/**
 * @module handlers/execute-v1
 * `POST /api/erp/execute` (alias `/v1/erp/execute`): v1 execute through `/jsonrpc` execute_kw,
 * or translated to JSON-2 (`ERP_V1_TRANSPORT`).
 */
import { forwardV1, type V1ForwardDeps } from '../core/forward.ts';
import { toExecuteCall } from '../middleware/inbound-edge.ts';
import type { Config } from '../platform/config.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { V1Router } from '../upstream/transport-routing.ts';
import { bodyChain, lambdaHandler } from './chain.ts';
import {
  type BaseRuntime,
  createStateRuntime,
  limitsDeps,
  type RuntimeOverrides,
  type StateRuntime,
} from './runtime-base.ts';
import { createForwardingRuntime, v1RoutingDeps } from './runtime-upstream.ts';

export interface ExecuteV1Runtime extends BaseRuntime, StateRuntime {
  readonly forward: V1ForwardDeps;
}

/** The function's own runtime: the base parts and the v1 transport over one HTTP client. */
export function createExecuteV1Runtime(
  config: Config,
  overrides: RuntimeOverrides = {},
): ExecuteV1Runtime & { readonly http: HttpClient } {
  const state = createStateRuntime(config, overrides);
  return {
    ...createForwardingRuntime(config, overrides, (upstream) => ({
      v1: new V1Router(config.v1Transport, v1RoutingDeps(upstream)),
      idempotency: state.idempotency,
    })),
    ...state,
  };
}

export function createHandler(runtime: ExecuteV1Runtime) {
  const deps = { ...runtime.forward, limits: limitsDeps(runtime) };
  return bodyChain(runtime, 'v1').handler((event, known, context) =>
    forwardV1(toExecuteCall(event, context, known), deps),
  );
}

export const handler = lambdaHandler(createExecuteV1Runtime, createHandler);
