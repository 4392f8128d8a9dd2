/**
 * @module operator/endpoints
 * The operator endpoints: `/_/about` (public), `/_/license` and `/_/metrics` (`x-api-key`
 * unless listed in `AUX_PUBLIC`). They take the path and what they read (config, license,
 * metrics), never the API Gateway event or the whole runtime.
 */
import { type LambdaResponse, plainJsonResponse, textResponse } from '../core/envelope.ts';
import type { RequestState } from '../core/request-state.ts';
import type { Config } from '../platform/config.ts';
import { InternalError } from '../platform/errors.ts';
import { findRoute } from '../platform/routes.ts';
import type { LicenseSource } from '../platform/secrets.ts';
import { buildAbout, effectiveAuth } from './about.ts';
import type { MetricsSource } from './metrics-source.ts';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './prometheus.ts';

/** What the operator endpoints read. */
export interface OperatorDeps {
  readonly config: Config;
  readonly license: LicenseSource;
  readonly metricsSource: MetricsSource;
}

/** Whether an operator request may skip `x-api-key`. Unknown paths are never public. */
export function isPublicOperatorRequest(
  method: string,
  path: string,
  config: Pick<Config, 'auxPublic'>,
): boolean {
  const route = findRoute(method, path);
  return route !== undefined && effectiveAuth(route, config) === 'public';
}

/** Answers `GET /_/about`, `/_/license` or `/_/metrics`. */
export async function serveOperator(
  path: string,
  state: RequestState,
  deps: OperatorDeps,
): Promise<LambdaResponse> {
  state.action = path;
  switch (path) {
    case '/_/about':
      return plainJsonResponse(state, buildAbout(deps.config));
    case '/_/license': {
      const status = await deps.license.getLicense();
      const { licensee, valid_until, is_valid, reason } = status;
      return plainJsonResponse(state, { licensee, valid_until, is_valid, ...(reason ? { reason } : {}) });
    }
    case '/_/metrics':
      return textResponse(
        state,
        renderPrometheus(await deps.metricsSource.snapshot()),
        PROMETHEUS_CONTENT_TYPE,
      );
    default:
      // API Gateway only routes the three paths above here.
      throw new InternalError(new Error(`operator endpoints: no route for ${path}`));
  }
}
