/**
 * @module handlers/chain
 * The chain builder, and the chain every execute and version handler shares, and `POST /mcp` too,
 * in the order of checks the README documents (docs/design.md explains why): observe (log +
 * metrics, outermost), envelope shaping (the only error → response mapping), a bounded look for
 * the envelope `id`, `x-api-key` (on `/mcp` also `Authorization: Bearer`), license, the body parse,
 * and whether the caller's key may use this API at all (its policy's `apis`). Validation, the rest of
 * the key's policy, the target policy and the upstream call follow in the handler's own function.
 *
 * The order is the builder's, not a comment's: observe and the envelope middleware are always the
 * first two (nothing else can add them), and a step can only be added once the steps before it
 * returned the values it needs (`Step<Needs, Adds>`, `middleware/step.ts`): the license check
 * needs the caller, the body step needs a licensed caller, an execute handler needs the body. No
 * step returns a value to Middy, so none ends the chain early. One order is `bodyChain`'s own,
 * not a type's: the `id` peek before the key check (the key check needs no `id`: the operator
 * function authenticates GETs, which have none); test/integration/key-before-body.test.ts fails
 * when a refused call stops echoing its `id`.
 */
import middy from '@middy/core';
import type { Answer, LambdaResponse } from '../core/envelope.ts';
import type { ApiName, Observed, ProxyContext } from '../core/request-facts.ts';
import { type Authenticated, apiKeyAuth } from '../middleware/api-key-auth.ts';
import { envelopeIdPeek } from '../middleware/envelope-id.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { keyPolicyApi } from '../middleware/key-policy-api.ts';
import { licenseCheck } from '../middleware/license-check.ts';
import { observe } from '../middleware/observe.ts';
import { envelopeMiddleware } from '../middleware/response-shaping.ts';
import { knownValues, learn, type NoValues, type Step } from '../middleware/step.ts';
import type { ProxyEvent, ProxyMiddleware } from '../middleware/types.ts';
import { type Config, getConfig } from '../platform/config.ts';
import { licenseDaysLeftValue, recordLicenseDaysLeft } from '../platform/metrics/record.ts';
import type { LicenseStatus } from '../platform/secrets.ts';
import type { BaseRuntime } from './runtime-base.ts';

/** What a chain's handler does with the event and the values its steps returned. */
export type ChainHandler<Known extends object> = (
  event: ProxyEvent,
  known: Known,
  context: ProxyContext,
) => Promise<Answer>;

/** The Lambda handler a chain becomes (Middy's). */
export type ProxyHandler = (event: ProxyEvent, context: ProxyContext) => Promise<LambdaResponse>;

/**
 * A chain being built: what its steps will have returned by the end is `Known`. Immutable: each
 * `step` gives a new chain.
 */
export class Chain<Known extends object> {
  private constructor(
    private readonly runtime: BaseRuntime,
    private readonly api: ApiName,
    private readonly steps: readonly ProxyMiddleware[],
  ) {}

  /**
   * A chain with observe (outermost) and envelope shaping, and no step yet: it knows what observe
   * gives every request (its trace and store meter).
   */
  static start(runtime: BaseRuntime, api: ApiName): Chain<Observed> {
    return new Chain<Observed>(runtime, api, []);
  }

  /** Adds a step that needs no more than what the chain knows; the new chain knows what it returns too. */
  step<Adds extends object>(next: Step<Known, Adds>): Chain<Known & Adds> {
    return new Chain<Known & Adds>(this.runtime, this.api, [...this.steps, next]);
  }

  /**
   * The Middy chain, ending in `handle`: it gets the values the steps returned, and returns the
   * response with its facts (merged into the record for observe; Middy gets the response).
   */
  handler(handle: ChainHandler<Known>): ProxyHandler {
    const { runtime, api } = this;
    // `Server-Timing` on the answers of execute and MCP only (`SERVER_TIMING`).
    const serverTiming =
      (api === 'v1' || api === 'v2' || api === 'mcp') && runtime.config.serverTiming === 'on';
    let chain = middy<ProxyEvent, LambdaResponse, Error, ProxyContext>()
      .use(observe({ logger: runtime.logger, metrics: runtime.metrics, api, serverTiming }))
      .use(envelopeMiddleware(api));
    for (const next of this.steps) chain = chain.use(next);
    return chain.handler(async (event, context) => {
      const answer = await handle(event, knownValues(context) as Known, context);
      learn(context, undefined, answer.facts);
      return answer.response;
    });
  }
}

/**
 * How often a process reports `LicenseDaysLeft` from calls (the expiry alarm needs it regularly, not
 * per call; the operator function's hourly license check reports it without calls).
 */
const LICENSE_METRIC_INTERVAL_MS = 60_000;

/** The full chain of the execute and version endpoints: the caller is a proxy key in `x-api-key`. */
export function bodyChain(runtime: BaseRuntime, api: Exclude<ApiName, 'aux' | 'mcp'>) {
  return chainWithAuth(runtime, api, apiKeyAuth(runtime.keys, { brakes: runtime.brakes }));
}

/**
 * The full chain with `auth` deciding who may call: `bodyChain`'s, and `POST /mcp`'s, whose
 * caller is a proxy key (also as a bearer) or an OAuth access token (middleware/mcp-auth.ts).
 */
export function chainWithAuth<A extends Authenticated>(
  runtime: BaseRuntime,
  api: Exclude<ApiName, 'aux'>,
  auth: Step<NoValues, A>,
) {
  let lastReported = Number.NEGATIVE_INFINITY;
  const reportDaysLeft = (status: LicenseStatus): void => {
    const now = Date.now();
    if (now - lastReported < LICENSE_METRIC_INTERVAL_MS) return;
    lastReported = now;
    recordLicenseDaysLeft(runtime.metrics, licenseDaysLeftValue(status));
  };
  return Chain.start(runtime, api)
    .step(envelopeIdPeek())
    .step(auth)
    .step(licenseCheck(runtime.license, { onStatus: reportDaysLeft }))
    .step(jsonBody())
    .step(keyPolicyApi(api));
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
