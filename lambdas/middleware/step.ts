/**
 * @module middleware/step
 * A step of a chain: a Middy middleware whose `before` runs one typed function and returns what it
 * learned, instead of writing it somewhere. The chain builder (`handlers/chain.ts`) adds steps
 * only where the values they need are known, so the order rules of the chain are types.
 *
 * {@link learn} is the one writer of the request's record (`core/request-facts.ts`): the steps'
 * middlewares, the chain's handler and the envelope middleware pass what they return to it;
 * observe creates the record and is its one reader.
 */
import type { ProxyContext, RequestFacts } from '../core/request-facts.ts';
import type { ProxyEvent, ProxyMiddleware, ProxyRequest } from './types.ts';

/** No values: what a chain knows before its first step. */
export type NoValues = Record<never, never>;

/** What a step returns: the values later steps and the handler may use, and what it learned. */
export interface StepResult<Adds extends object> {
  readonly values: Adds;
  /** For the request log line and the metrics. */
  readonly facts?: RequestFacts;
}

/**
 * One step before the handler, as a Middy middleware. `run` reads the event and the values earlier
 * steps returned (`Needs`) and returns its own values and facts; it never sets a response (a
 * refusal is thrown), and `before` always returns nothing, so no step ends the chain early by
 * accident. `run` is a function-typed property (checked contravariantly): a step that needs values
 * no earlier step returned does not type-check where the chain builder adds it.
 */
export interface Step<Needs extends object, Adds extends object> extends ProxyMiddleware {
  readonly run: (event: ProxyEvent, known: Needs) => StepResult<Adds> | Promise<StepResult<Adds>>;
  readonly before: (request: ProxyRequest) => void | Promise<void>;
}

/**
 * Merges what a step, the handler or the envelope returned into the request's record. Nothing
 * else writes it. Without a record (a middleware used outside a chain, as some tests do), there
 * is nothing to merge into.
 */
export function learn(
  context: ProxyContext,
  values: object | undefined,
  facts: RequestFacts | undefined,
): void {
  const record = context.record;
  if (record === undefined) return;
  if (values !== undefined) Object.assign(record.values, values);
  // Merged in place: one object per request, however many steps (no copy per step).
  if (facts !== undefined) Object.assign(record.facts, facts);
}

/** The values the record holds: what the steps returned so far (partial on an error path). */
export function knownValues(context: ProxyContext): Readonly<Record<string, unknown>> {
  return context.record?.values ?? {};
}

/** Makes a step of `run`; its `before` is named `<name>Before` (Middy's timing hooks show it). */
export function step<Needs extends object, Adds extends object>(
  name: string,
  run: Step<Needs, Adds>['run'],
): Step<Needs, Adds> {
  const before = {
    [`${name}Before`](request: ProxyRequest): void | Promise<void> {
      const result = run(request.event, knownValues(request.context) as Needs);
      if (!(result instanceof Promise)) return learn(request.context, result.values, result.facts);
      return result.then((done) => learn(request.context, done.values, done.facts));
    },
  }[`${name}Before`] as Step<Needs, Adds>['before'];
  return { run, before };
}
