/**
 * @module core/policy/call-rules
 * The rules of a key policy that read a call's content, asked once per ERP call after the api,
 * access, model, method, database and target rules (`checkKeyPolicy`), so that no `fields_get`
 * lookup reaches an ERP the key may not reach: `fields` (the request side refuses, the answer side
 * removes), then what no rule reads (core/policy/unreadable.ts refuses it), then `companies`
 * (refuses, or sets the context). A key whose only content rule is `confirm` has only its
 * `export_data` read here. A key without `fields`, `companies` and `confirm` is never asked
 * ({@link hasContentRules}): its calls stay byte for byte and cost nothing.
 *
 * Both execute APIs and every MCP tool's ERP call pass an {@link ErpCall}; its arguments are read
 * once, numbers as spelt, and written back only when the company rule set the context. The
 * transports then carry them as they carry any call, across the bridges both ways (v1's
 * `keyword.context` is JSON-2's `context`, and back).
 */
import type { KeyPolicy } from '../../platform/key-policy.ts';
import {
  isLosslessObject,
  type LosslessValue,
  parseLossless,
  stringifyLossless,
} from '../../platform/lossless-json.ts';
import type { ErpCall, ErpOutcome } from '../../upstream/erp-transport.ts';
import { filterOutcome } from './answer-filter.ts';
import { CALL_SHAPES } from './call-shapes.ts';
import { companyRule } from './company-rule.ts';
import { type FieldsOf, fieldRule } from './field-rule.ts';
import { checkReadable } from './unreadable.ts';

/** A call the rules allowed: as it goes to the ERP, and what its answer passes through. */
export interface RuledCall {
  readonly call: ErpCall;
  /** Removes the denied fields of the answer; `undefined`: the answer passes as it is. */
  readonly answer: ((outcome: ErpOutcome) => ErpOutcome) | undefined;
}

/** Whether `policy` has a rule of {@link applyContentRules} (`fields`, `companies`, `confirm`). */
export function hasContentRules(policy: KeyPolicy | undefined): policy is KeyPolicy {
  return (
    policy !== undefined &&
    (policy.fields !== undefined || policy.companies !== undefined || policy.confirm !== undefined)
  );
}

function argumentsOf(call: ErpCall): {
  args: LosslessValue[] | undefined;
  kwargs: { [name: string]: LosslessValue };
} {
  const args = call.argsJson === undefined ? undefined : parseLossless(call.argsJson);
  const kwargs = parseLossless(call.kwargsJson);
  return {
    args: Array.isArray(args) ? args : undefined,
    kwargs: isLosslessObject(kwargs) ? kwargs : {},
  };
}

/**
 * The `fields` and `companies` rules on `call`: throws the refusal (-32008, rule `field` or
 * `company`), or answers the call to send (its context set by the company rule) and the filter of
 * its answer. `fieldsOf` asks the call's ERP and database for a model's relations (only when a
 * path needs one: core/policy/fields-lookup.ts).
 *
 * @example
 * const ruled = await applyContentRules(policy, call, fieldsOf);
 * const outcome = await transport.call(ruled.call, context);
 * return ruled.answer ? ruled.answer(outcome) : outcome;
 */
export async function applyContentRules(
  policy: KeyPolicy,
  call: ErpCall,
  fieldsOf: FieldsOf,
): Promise<RuledCall> {
  // A key whose only content rule is `confirm`: its write tools' contexts were read at the policy
  // step; of its requests only an export_data asking for external ids (a write no one confirms) is read.
  if (policy.fields === undefined && policy.companies === undefined && call.method !== 'export_data')
    return { call, answer: undefined };
  const { args, kwargs } = argumentsOf(call);
  const shape = CALL_SHAPES.get(call.method);
  let answer: RuledCall['answer'];
  if (policy.fields !== undefined) {
    const decision = await fieldRule(
      policy.fields,
      { model: call.model, method: call.method, ...(args ? { args } : {}), kwargs },
      fieldsOf,
      shape,
    );
    if (decision.refusal !== undefined) throw decision.refusal;
    const { denied, aliases } = decision;
    if (denied !== undefined && shape !== undefined && shape.answer !== 'none') {
      const answerShape = shape.answer;
      // A group's aggregate alias (read_group's `alias:agg(field)`) names an answer member, not a field: kept.
      const test =
        aliases === undefined || answerShape !== 'groups'
          ? denied
          : (name: string) => !aliases.has(name) && denied(name);
      answer = (outcome) => filterOutcome(outcome, answerShape, test);
    }
  }
  // What no rule reads, before the company rule sets the context it scopes (its own keys included).
  checkReadable(policy, { model: call.model, method: call.method, ...(args ? { args } : {}), kwargs }, shape);
  let changed = false;
  if (policy.companies !== undefined) {
    const decision = companyRule(policy.companies, {
      method: call.method,
      db: call.db,
      ...(args ? { args } : {}),
      kwargs,
    });
    if (decision.refusal !== undefined) throw decision.refusal;
    changed = decision.changed;
  }
  return { call: changed ? { ...call, kwargsJson: stringifyLossless(kwargs) } : call, answer };
}
