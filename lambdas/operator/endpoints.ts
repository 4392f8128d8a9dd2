/**
 * @module operator/endpoints
 * The operator endpoints: `/_/about` (public), `/_/license` and `/_/metrics` (`x-api-key`
 * unless listed in `AUX_PUBLIC`), `/_/audit` (`x-api-key` of a key whose policy lists `audit`). They take the path and what they read (config, license,
 * metrics), never the API Gateway event or the whole runtime.
 */
import { type Answer, plainJsonResponse, textResponse } from '../core/envelope.ts';
import { learnedBefore } from '../core/request-facts.ts';
import { brakesInForce } from '../platform/brakes/brakes.ts';
import type { BrakesSource, BrakesStore } from '../platform/brakes/brakes-source.ts';
import type { Config } from '../platform/config.ts';
import { InternalError } from '../platform/errors.ts';
import { hasCallRules, type KeyPolicy } from '../platform/key-policy.ts';
import { findRoute } from '../platform/routes.ts';
import type { LicenseSource, ProxyKeySource } from '../platform/secrets.ts';
import { buildAbout, effectiveAuth } from './about.ts';
import { type AuditReading, serveAudit } from './audit-endpoint.ts';
import { BRAKES_PATH, BRAKES_RELEASE_PATH, serveBrakes } from './brakes-endpoint.ts';
import type { MetricsSource } from './metrics-source.ts';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './prometheus.ts';

/** What the operator endpoints read. */
export interface OperatorDeps {
  readonly config: Config;
  readonly license: LicenseSource;
  readonly metricsSource: MetricsSource;
  /** The proxy keys: `/_/about` says whether any carries a policy. */
  readonly keys: ProxyKeySource;
  /** The audit's reader, which `GET /_/audit` reads (docs/guide/audit.md). */
  readonly auditReading: AuditReading;
  /** Where the operators' brakes are kept (`/_/brakes`); `undefined`: no store. */
  readonly brakesStore: BrakesStore | undefined;
  /** The instance's copy of the brakes: `/_/about` counts those in force. */
  readonly brakes: BrakesSource | undefined;
}

/** What an operator request brings besides its path: its query parameters and the caller's policy. */
export interface OperatorRequest {
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly policy?: KeyPolicy | undefined;
  /** The request's method and body text (`POST /_/brakes`), and the caller's key name. */
  readonly method?: string;
  readonly body?: string | undefined;
  readonly callerName?: string | undefined;
}

/**
 * Whether any proxy key carries a policy (and one with call rules: `methods`, `fields`, `companies`), and whether limits are configured (`ERP_TARGET_LIMITS`,
 * or a key policy's `limits`); `null` where the keys cannot be read (about stays up).
 */
async function policiesInUse(
  keys: ProxyKeySource,
  config: Pick<Config, 'targetLimits'>,
): Promise<{
  readonly keyPolicies: boolean | null;
  readonly callRules: boolean | null;
  readonly limits: boolean | null;
  readonly confirmations: boolean | null;
}> {
  const targetLimits = config.targetLimits.size > 0;
  try {
    const named = await keys.getKeys();
    return {
      keyPolicies: named.some((key) => key.policy !== undefined),
      callRules: named.some((key) => hasCallRules(key.policy)),
      limits: targetLimits || named.some((key) => key.policy?.limits !== undefined),
      confirmations: named.some((key) => key.policy?.confirm !== undefined),
    };
  } catch {
    return { keyPolicies: null, callRules: null, limits: targetLimits ? true : null, confirmations: null };
  }
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

/**
 * Answers `GET /_/about`, `/_/license` or `/_/metrics`. The path is the request log line's action,
 * on the answer and on what it throws.
 */
export async function serveOperator(
  path: string,
  deps: OperatorDeps,
  request: OperatorRequest = {},
): Promise<Answer> {
  const learned = { action: path };
  const answer = await learnedBefore(learned, () => answerOperator(path, deps, request));
  return { response: answer.response, facts: Object.assign(learned, answer.facts) };
}

/** How many brakes are in force (the count alone: `/_/about` is public); `null` without a store. */
async function brakesCount(brakes: BrakesSource | undefined): Promise<number | null> {
  if (brakes === undefined) return null;
  return brakesInForce(await brakes.current(Date.now()), Date.now()).length;
}

async function answerOperator(path: string, deps: OperatorDeps, request: OperatorRequest): Promise<Answer> {
  switch (path) {
    case BRAKES_PATH:
    case BRAKES_RELEASE_PATH:
      return serveBrakes(request.method ?? 'GET', path, request.body, request.callerName ?? '', deps);
    case '/_/audit':
      return serveAudit(request.query ?? {}, request.policy, deps);
    case '/_/about': {
      const [inUse, brakes] = await Promise.all([
        policiesInUse(deps.keys, deps.config),
        brakesCount(deps.brakes),
      ]);
      return plainJsonResponse(
        buildAbout(
          deps.config,
          undefined,
          inUse.keyPolicies,
          inUse.limits,
          inUse.callRules,
          inUse.confirmations,
          brakes,
        ),
      );
    }
    case '/_/license': {
      const status = await deps.license.getLicense();
      const { licensee, valid_until, is_valid, reason } = status;
      return plainJsonResponse({ licensee, valid_until, is_valid, ...(reason ? { reason } : {}) });
    }
    case '/_/metrics':
      return textResponse(renderPrometheus(await deps.metricsSource.snapshot()), PROMETHEUS_CONTENT_TYPE);
    default:
      // API Gateway only routes the three paths above here.
      throw new InternalError(new Error(`operator endpoints: no route for ${path}`));
  }
}
