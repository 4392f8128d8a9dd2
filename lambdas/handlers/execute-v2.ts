/**
 * @module handlers/execute-v2
 * `POST /v2/erp/execute`: v2 execute through JSON-2 (ERP 19 and later), or over `/jsonrpc`
 * execute_kw to ERP 16-18 (`ERP_V2_TRANSPORT`).
 */
import { forwardV2, type V2ForwardDeps } from '../core/forward.ts';
import { toExecuteCall } from '../middleware/inbound-edge.ts';
import type { Config } from '../platform/config.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { V2Router } from '../upstream/transport-routing.ts';
import { bodyChain, lambdaHandler } from './chain.ts';
import {
  type BaseRuntime,
  createStateRuntime,
  limitsDeps,
  type RuntimeOverrides,
  type StateRuntime,
} from './runtime-base.ts';
import { createForwardingRuntime, routingDeps } from './runtime-upstream.ts';

export interface ExecuteV2Runtime extends BaseRuntime, StateRuntime {
  readonly forward: V2ForwardDeps;
}

/** The function's own runtime: the base parts and the v2 transport over one HTTP client. */
export function createExecuteV2Runtime(
  config: Config,
  overrides: RuntimeOverrides = {},
): ExecuteV2Runtime & { readonly http: HttpClient } {
  const state = createStateRuntime(config, overrides);
  return {
    ...createForwardingRuntime(config, overrides, (upstream) => ({
      v2: new V2Router(config.v2Transport, routingDeps(upstream)),
      idempotency: state.idempotency,
    })),
    ...state,
  };
}

export function createHandler(runtime: ExecuteV2Runtime) {
  const deps = { ...runtime.forward, limits: limitsDeps(runtime) };
  return bodyChain(runtime, 'v2').handler((event, known, context) =>
    forwardV2(toExecuteCall(event, context, known), deps),
  );
}

export const handler = lambdaHandler(createExecuteV2Runtime, createHandler);
