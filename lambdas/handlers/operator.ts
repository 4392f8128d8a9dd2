/**
 * @module handlers/operator
 * The `aux` function: `GET /_/about`, `GET /_/license`, `GET /_/metrics` (the operator endpoints,
 * from API Gateway) and the hourly license check (from an EventBridge rule, without the chain).
 */

import type { Context } from 'aws-lambda';
import type { LambdaResponse } from '../core/envelope.ts';
import type { ProxyContext } from '../core/request-facts.ts';
import { apiKeyAuth } from '../middleware/api-key-auth.ts';
import { bodyText } from '../middleware/json-body.ts';
import { keyPolicyApi } from '../middleware/key-policy-api.ts';
import { isHttpApiEvent, type ProxyEvent } from '../middleware/types.ts';
import { type AuditReading, CURSOR_KEY_PURPOSE } from '../operator/audit-endpoint.ts';
import { type BrakesAgeResult, runBrakesAge } from '../operator/brakes-age.ts';
import { BRAKES_PATH, BRAKES_RELEASE_PATH } from '../operator/brakes-endpoint.ts';
import { isPublicOperatorRequest, type OperatorDeps, serveOperator } from '../operator/endpoints.ts';
import { createMetricsSource } from '../operator/metrics-source.ts';
import { type LicenseCheckResult, runScheduledLicenseCheck } from '../operator/scheduled-license-check.ts';
import { createAuditReader } from '../platform/audit/audit-reader-choice.ts';
import type { Config } from '../platform/config.ts';
import type { KeyPolicyApi } from '../platform/key-policy.ts';
import {
  BRAKES_AGE_JOB,
  isBrakesAgeEvent,
  isLicenseCheckEvent,
  LICENSE_CHECK_JOB,
} from '../platform/scheduled-jobs.ts';
import { deriveSealKey, generatedSealKey, type SealKey } from '../platform/seal.ts';
import type { ProxyKeySource } from '../platform/secrets.ts';
import { Chain, lambdaHandler } from './chain.ts';
import {
  type BaseRuntime,
  createBaseRuntime,
  localMetricsStore,
  type RuntimeOverrides,
} from './runtime-base.ts';

export interface OperatorRuntime extends BaseRuntime, OperatorDeps {}

/**
 * What `GET /_/audit` reads (the aux function and the local server): `AUDIT`, the reader (the
 * overrides' store or the configuration's) and the key of its cursors (derived from the proxy keys'
 * secret when there is one, read then through `keys`; else generated at start).
 */
export function createAuditReading(
  config: Config,
  overrides: RuntimeOverrides,
  keys: ProxyKeySource,
): AuditReading {
  // Made on the first read of the audit, not at cold start.
  let generated: SealKey | undefined;
  return {
    mode: config.audit,
    store: overrides.auditStore ?? createAuditReader(config),
    cursorKey: async () => {
      if (config.proxyKeysSecretId === undefined) {
        generated ??= generatedSealKey();
        return generated;
      }
      return deriveSealKey((await keys.getKeys()).map((named) => named.key).join('\n'), CURSOR_KEY_PURPOSE);
    },
  };
}

/** The function's own runtime: the base parts and the metrics source (no HTTP client). */
export function createOperatorRuntime(config: Config, overrides: RuntimeOverrides = {}): OperatorRuntime {
  const store = localMetricsStore(config);
  const base = createBaseRuntime(config, overrides, store);
  return {
    ...base,
    metricsSource: overrides.metricsSource ?? createMetricsSource(config, store),
    auditReading: createAuditReading(config, overrides, base.keys),
  };
}

/** The key policy API an operator path belongs to. */
function operatorApiOf(event: ProxyEvent): KeyPolicyApi {
  if (event.rawPath === '/_/audit') return 'audit';
  return event.rawPath === BRAKES_PATH || event.rawPath === BRAKES_RELEASE_PATH ? 'brakes' : 'operator';
}

/** The operator endpoints: the chain API Gateway's events go through (the local server uses it too). */
export function createHandler(runtime: OperatorRuntime) {
  return (
    Chain.start(runtime, 'aux')
      .step(
        apiKeyAuth(runtime.keys, {
          isPublic: (event) =>
            isPublicOperatorRequest(event.requestContext.http.method, event.rawPath, runtime.config),
          brakes: runtime.brakes,
        }),
      )
      // `/_/about` is public: it has no caller, so no policy to ask (a key sent to it is not checked).
      // `/_/audit` is the audit's, and `/_/brakes` the brakes': only a key whose policy lists it has them.
      .step(keyPolicyApi(operatorApiOf))
      .handler((event, known) =>
        serveOperator(event.rawPath, runtime, {
          query: event.queryStringParameters ?? {},
          policy: known.policy,
          method: event.requestContext.http.method,
          body: event.requestContext.http.method === 'POST' ? bodyText(event) : undefined,
          callerName: known.callerName,
        }),
      )
  );
}

/**
 * The Lambda entry of the aux function: the exact license check event runs the check, an API
 * Gateway HTTP API event goes through the operator chain, and anything else is refused (thrown,
 * so it shows as a function error) rather than guessed at.
 */
export function createLambdaHandler(runtime: OperatorRuntime) {
  const operatorEndpoints = createHandler(runtime);
  return async function operatorHandler(
    event: unknown,
    context: Context,
  ): Promise<LambdaResponse | LicenseCheckResult | BrakesAgeResult> {
    if (isLicenseCheckEvent(event)) return runScheduledLicenseCheck(runtime, context);
    if (isBrakesAgeEvent(event)) return runBrakesAge(runtime);
    if (isHttpApiEvent(event)) return operatorEndpoints(event, context as ProxyContext);
    throw new Error(
      `aux: the event is neither an API Gateway HTTP API (payload 2.0) request nor one of its scheduled jobs (${LICENSE_CHECK_JOB}, ${BRAKES_AGE_JOB})`,
    );
  };
}

export const handler = lambdaHandler(createOperatorRuntime, createLambdaHandler);
