/**
 * @module handlers/chain
 * The Middy chain every execute and version handler shares, and `POST /mcp` too, in the order of
 * checks the README documents (docs/design.md explains why): observe (log + metrics, outermost),
 * envelope shaping (the only error → response mapping), a bounded look for the envelope `id`,
 * `x-api-key` (on `/mcp` also `Authorization: Bearer`), license, and only then the body parse.
 * Validation, target policy and the upstream call follow in the handler's own function.
 */
import middy from '@middy/core';
import type { LambdaResponse } from '../core/envelope.ts';
import type { ApiName, ProxyContext } from '../core/request-state.ts';
import { apiKeyAuth } from '../middleware/api-key-auth.ts';
import { envelopeIdPeek } from '../middleware/envelope-id.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { licenseCheck } from '../middleware/license-check.ts';
import { observe } from '../middleware/observe.ts';
import { envelopeMiddleware } from '../middleware/response-shaping.ts';
import type { ProxyEvent } from '../middleware/types.ts';
import { type Config, getConfig } from '../platform/config.ts';
import { licenseDaysLeftValue, recordLicenseDaysLeft } from '../platform/metrics/record.ts';
import type { LicenseStatus } from '../platform/secrets.ts';
import type { BaseRuntime } from './runtime-base.ts';

/** observe → envelope: the part every handler has, the aux one included. */
export function baseChain(runtime: BaseRuntime, api: ApiName) {
  return middy<ProxyEvent, LambdaResponse, Error, ProxyContext>()
    .use(observe({ logger: runtime.logger, metrics: runtime.metrics, api }))
    .use(envelopeMiddleware());
}

/**
 * How often a process reports `LicenseDaysLeft` from calls (the expiry alarm needs it regularly, not
 * per call; the aux function's hourly license check reports it without calls).
 */
const LICENSE_METRIC_INTERVAL_MS = 60_000;

/** The full chain of the execute and version endpoints, and of `POST /mcp`. */
export function executeChain(runtime: BaseRuntime, api: Exclude<ApiName, 'aux'>) {
  let lastReported = Number.NEGATIVE_INFINITY;
  const reportDaysLeft = (status: LicenseStatus): void => {
    const now = Date.now();
    if (now - lastReported < LICENSE_METRIC_INTERVAL_MS) return;
    lastReported = now;
    recordLicenseDaysLeft(runtime.metrics, licenseDaysLeftValue(status));
  };
  return baseChain(runtime, api)
    .use(envelopeIdPeek())
    .use(apiKeyAuth(runtime.keys, { bearer: api === 'mcp' }))
    .use(licenseCheck(runtime.license, { onStatus: reportDaysLeft }))
    .use(jsonBody());
}

/**
 * The exported Lambda handler: on the first invocation (the cold start) it reads the config and
 * builds the function's own runtime (`createRuntime`: only the parts this handler uses) and the
 * chain, once. Importing a handler module therefore has no side effects, so the local server and
 * the tests can compose handlers over runtimes of their own.
 */
export function lambdaHandler<TRuntime, TEvent, TContext, TResult>(
  createRuntime: (config: Config) => TRuntime,
  create: (runtime: TRuntime) => (event: TEvent, context: TContext) => Promise<TResult>,
): (event: TEvent, context: TContext) => Promise<TResult> {
  let built: ((event: TEvent, context: TContext) => Promise<TResult>) | undefined;
  return (event, context) => {
    built ??= create(createRuntime(getConfig()));
    return built(event, context);
  };
}
