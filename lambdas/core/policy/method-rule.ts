/**
 * @module core/policy/method-rule
 * The `methods` rule of a key policy: the most specific key of the map that matches the model
 * (exact, longest `prefix.*`, `*`) lists the methods it allows; a model no key matches may call every
 * method its `access` allows. Asked with the model and method exactly as they are sent to the ERP:
 * a v1 action or `call_method`'s `fn_name`, a v2 method, each ERP call of an MCP tool.
 */

import type { KeyPolicyRefusedError } from '../../platform/errors.ts';
import type { KeyPolicy } from '../../platform/key-policy.ts';
import { ruleFor } from '../../platform/model-rules.ts';
import { callRefusal, shownName } from './refusal.ts';

/**
 * The refusal of `method` on `model` by the policy's `methods`, or `undefined` when it is allowed.
 *
 * @example
 * methodRule(policy, 'helpdesk.ticket', 'unlink')
 * // KeyPolicyRefusedError: Refused by this key's policy: method unlink is not in this key's methods for helpdesk.ticket
 */
export function methodRule(
  policy: Pick<KeyPolicy, 'methods'>,
  model: string,
  method: string,
): KeyPolicyRefusedError | undefined {
  if (policy.methods === undefined) return undefined;
  const allowed = ruleFor(policy.methods, model);
  if (allowed === undefined || allowed.has(method)) return undefined;
  return callRefusal(
    'method',
    `method ${shownName(method)} is not in this key's methods for ${shownName(model)}`,
  );
}
