/**
 * @module handlers/operator
 * `GET /_/about`, `GET /_/license`, `GET /_/metrics`: the operator endpoints.
 */

import { apiKeyAuth } from '../middleware/api-key-auth.ts';
import { isPublicAuxRequest, serveAux } from '../operator/endpoints.ts';
import { baseChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

export function createHandler(runtime: Runtime) {
  return baseChain(runtime, 'aux')
    .use(apiKeyAuth(runtime.keys, { isPublic: (request) => isPublicAuxRequest(request.event, runtime) }))
    .handler((event, context) => serveAux(event, context, runtime));
}

export const handler = lambdaHandler(createHandler);
