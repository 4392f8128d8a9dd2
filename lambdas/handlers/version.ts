/**
 * @module handlers/version
 * `POST /api/erp/version`, `/v1/erp/version`, `/v2/erp/version`: the target ERP's version.
 */
import { erpAddresses } from '../core/brakes-addresses.ts';
import { forwardVersion, type VersionForwardDeps } from '../core/forward.ts';
import { toInboundCall } from '../middleware/inbound-edge.ts';
import type { Config } from '../platform/config.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { bodyChain, lambdaHandler } from './chain.ts';
import type { BaseRuntime, RuntimeOverrides } from './runtime-base.ts';
import { createForwardingRuntime } from './runtime-upstream.ts';

export interface VersionRuntime extends BaseRuntime {
  readonly forward: VersionForwardDeps;
}

/** The function's own runtime: the base parts and the version client (no transport). */
export function createVersionRuntime(
  config: Config,
  overrides: RuntimeOverrides = {},
): VersionRuntime & { readonly http: HttpClient } {
  return createForwardingRuntime(config, overrides, (upstream) => ({ versions: upstream.versions }));
}

export function createHandler(runtime: VersionRuntime) {
  const deps = {
    ...runtime.forward,
    brakes: runtime.brakes,
    brakesAddresses: erpAddresses(runtime.forward.lookup),
  };
  return bodyChain(runtime, 'version').handler((event, known, context) =>
    forwardVersion(toInboundCall(event, context, known), deps),
  );
}

export const handler = lambdaHandler(createVersionRuntime, createHandler);
