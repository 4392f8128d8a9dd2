/**
 * @module core/policy/refusal
 * The refusal of a key policy's call rules (`method`, `field`, `company`): -32008, HTTP 403, whose
 * message names the rule's subject (a method, a field and its model, a company id or database),
 * never the key, and which carries the rule for the log line's `policy_rule` and `PolicyRefusals`.
 */
import { echoed } from '../../platform/bounded-text.ts';
import { MODEL_NAME } from '../../platform/erp-names.ts';
import { KeyPolicyRefusedError } from '../../platform/errors.ts';
import type { KeyPolicyRule } from '../../platform/key-policy.ts';
import { withFacts } from '../request-facts.ts';

/** The rules of a call's content. */
export type CallRule = Extract<KeyPolicyRule, 'method' | 'field' | 'company'>;

/** A refusal by `rule`. */
export function callRefusal(rule: CallRule, message: string): KeyPolicyRefusedError {
  return withFacts(new KeyPolicyRefusedError(message, rule), { policyRule: rule });
}

/** A name in a message: as it is when it is a plain name, else quoted with control characters escaped. */
export function shownName(name: string): string {
  return MODEL_NAME.test(name) && name.length <= 100 ? name : JSON.stringify(echoed(name));
}
