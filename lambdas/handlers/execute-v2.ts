/**
 * @module handlers/execute-v2
 * `POST /v2/erp/execute`: v2 execute through JSON-2 (ERP 19 and later).
 */
import { forwardV2 } from '../core/forward.ts';
import { toInboundCall } from '../middleware/inbound-call.ts';
import { executeChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

export function createHandler(runtime: Runtime) {
  return executeChain(runtime, 'v2').handler((event, context) =>
    forwardV2(toInboundCall(event, context), context.proxy, runtime.forward),
  );
}

export const handler = lambdaHandler(createHandler);
