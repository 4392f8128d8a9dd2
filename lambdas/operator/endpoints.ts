/**
 * @module operator/endpoints
 * The operator endpoints: `/_/about` (public), `/_/license` and `/_/metrics` (`x-api-key`
 * unless listed in `AUX_PUBLIC`).
 */

import { type LambdaResponse, plainJsonResponse, textResponse } from '../core/envelope.ts';
import type { ProxyContext } from '../core/request-state.ts';
import type { Runtime } from '../handlers/runtime.ts';
import type { ProxyEvent } from '../middleware/types.ts';
import { InternalError } from '../platform/errors.ts';
import { findRoute } from '../platform/routes.ts';
import { buildAbout, effectiveAuth } from './about.ts';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './prometheus.ts';

/** Whether an aux request may skip `x-api-key`. Unknown paths are never public. */
export function isPublicAuxRequest(event: ProxyEvent, runtime: Runtime): boolean {
  const route = findRoute(event.requestContext.http.method, event.rawPath);
  return route !== undefined && effectiveAuth(route, runtime.config) === 'public';
}

export async function serveAux(
  event: ProxyEvent,
  context: ProxyContext,
  runtime: Runtime,
): Promise<LambdaResponse> {
  const state = context.proxy;
  state.action = event.rawPath;
  switch (event.rawPath) {
    case '/_/about':
      return plainJsonResponse(state, buildAbout(runtime.config));
    case '/_/license': {
      const status = await runtime.license.getLicense();
      const { licensee, valid_until, is_valid, reason } = status;
      return plainJsonResponse(state, { licensee, valid_until, is_valid, ...(reason ? { reason } : {}) });
    }
    case '/_/metrics':
      return textResponse(
        state,
        renderPrometheus(await runtime.metricsSource.snapshot()),
        PROMETHEUS_CONTENT_TYPE,
      );
    default:
      // API Gateway only routes the three paths above here.
      throw new InternalError(new Error(`aux: no route for ${event.rawPath}`));
  }
}
