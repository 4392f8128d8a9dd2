/**
 * @module handlers/operator
 * `GET /_/about`, `GET /_/license`, `GET /_/metrics`: the operator endpoints (the `aux` function).
 */

import { apiKeyAuth } from '../middleware/api-key-auth.ts';
import { isPublicOperatorRequest, serveOperator } from '../operator/endpoints.ts';
import { baseChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

export function createHandler(runtime: Runtime) {
  return baseChain(runtime, 'aux')
    .use(
      apiKeyAuth(runtime.keys, {
        isPublic: ({ event }) =>
          isPublicOperatorRequest(event.requestContext.http.method, event.rawPath, runtime.config),
      }),
    )
    .handler((event, context) => serveOperator(event.rawPath, context.proxy, runtime));
}

export const handler = lambdaHandler(createHandler);
