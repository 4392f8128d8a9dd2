/**
 * @module middleware/key-policy-api
 * The first question a key's policy answers (README, "Key policies"): may this key use this API at
 * all? Asked as a step, as soon as the caller is known and before the call itself is handled (on
 * `POST /mcp`, before any MCP processing); the core asks the rest (models, methods, targets) of the
 * same check (`core/key-policy-check.ts`).
 */
import { checkKeyPolicy } from '../core/key-policy-check.ts';
import type { KeyPolicy, KeyPolicyApi } from '../platform/key-policy.ts';
import { type Step, step } from './step.ts';
import type { ProxyEvent } from './types.ts';

/** What the step returns: the API was allowed. */
export interface ApiAllowed {
  readonly apiAllowed: true;
}

/**
 * Refuses (-32008, 403) a caller whose key's policy does not list `api` (or the API of the
 * request's path, for the aux function's operator and audit endpoints); a request without a caller
 * (a public operator request) has no policy to ask.
 */
export function keyPolicyApi(
  api: KeyPolicyApi | ((event: ProxyEvent) => KeyPolicyApi),
): Step<{ readonly callerName: string | undefined; readonly policy: KeyPolicy | undefined }, ApiAllowed> {
  return step('keyPolicyApi', (event, known) => {
    if (known.callerName !== undefined) {
      checkKeyPolicy(known.policy, { api: typeof api === 'function' ? api(event) : api });
    }
    return { values: { apiAllowed: true } };
  });
}
