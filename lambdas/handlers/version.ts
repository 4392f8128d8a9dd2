/**
 * @module handlers/version
 * `POST /api/erp/version`, `/v1/erp/version`, `/v2/erp/version`: the target ERP's version.
 */
import { forwardVersion } from '../core/forward.ts';
import { toInboundCall } from '../middleware/inbound-call.ts';
import { executeChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

export function createHandler(runtime: Runtime) {
  return executeChain(runtime, 'version').handler((event, context) =>
    forwardVersion(toInboundCall(event, context), context.proxy, runtime.forward),
  );
}

export const handler = lambdaHandler(createHandler);
