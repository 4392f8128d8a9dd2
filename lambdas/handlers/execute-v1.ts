/**
 * @module handlers/execute-v1
 * `POST /api/erp/execute` (alias `/v1/erp/execute`): v1 execute through `/jsonrpc` execute_kw.
 */
import { forwardV1 } from '../core/forward.ts';
import { toInboundCall } from '../middleware/inbound-call.ts';
import { executeChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

export function createHandler(runtime: Runtime) {
  return executeChain(runtime, 'v1').handler((event, context) =>
    forwardV1(toInboundCall(event, context), context.proxy, runtime.forward),
  );
}

export const handler = lambdaHandler(createHandler);
