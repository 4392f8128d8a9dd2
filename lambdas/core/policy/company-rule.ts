/**
 * @module core/policy/company-rule
 * The `companies` rule of a key policy (docs/guide/policies.md, "Methods, fields and companies"): a call to a database the map names
 * runs with `context.allowed_company_ids` set to the key's companies for it (the first is then
 * Odoo's current company), or to the caller's own list when it is a non-empty subset; a database it
 * does not name is refused. Refused too: a caller's list with an id outside; `force_company`,
 * `company_id`, `default_company_id` or `company` context keys naming anything but an allowed id;
 * a `context` nested in a `web_*` call's arguments (a specification's, which Odoo applies to the
 * relation's read); a `company_id` other than an allowed id in create or write values (`false`
 * shares the record with every company), x2many commands' values included, and `company_ids`
 * naming another company. An empty list, `false` or `null` as `allowed_company_ids` (Odoo reads them
 * as every company of the user) is replaced by the key's list, not passed.
 */
import type { KeyPolicyRefusedError } from '../../platform/errors.ts';
import {
  isLosslessObject,
  JsonNumber,
  type LosslessValue,
  losslessInteger,
  setMember,
} from '../../platform/lossless-json.ts';
import { CALL_SHAPES, callArguments, commandCode } from './call-shapes.ts';
import { callRefusal } from './refusal.ts';

/** What the company rule reads of a call (its `kwargs` object is changed in place when the context is set). */
export interface CompanyRuleCall {
  readonly method: string;
  readonly db: string;
  readonly args?: readonly LosslessValue[];
  readonly kwargs: { [name: string]: LosslessValue };
}

/** The company rule's answer: refused, or the call runs with `kwargs` changed (`changed`) or as sent. */
export type CompanyDecision =
  | { readonly refusal: KeyPolicyRefusedError }
  | { readonly refusal?: undefined; readonly changed: boolean };

/** The context keys that name a company for the call or its defaults. */
const COMPANY_CONTEXT_KEYS = ['force_company', 'company_id', 'default_company_id', 'company'] as const;

class Refused {
  constructor(readonly error: KeyPolicyRefusedError) {}
}

function refuse(message: string): never {
  throw new Refused(callRefusal('company', message));
}

/** A company id in `allowed`, or a non-empty list of them. */
function allowedIds(value: LosslessValue | undefined, allowed: readonly number[]): boolean {
  const list = Array.isArray(value) ? value : [value];
  return (
    list.length > 0 &&
    list.every((item) => {
      const id = losslessInteger(item);
      return id !== undefined && allowed.includes(id);
    })
  );
}

/** `company_ids` values: ids, or x2many commands (4, id), (6, 0, ids), (3|5...) that add none outside. */
function companyCommands(value: LosslessValue | undefined, allowed: readonly number[]): boolean {
  if (!Array.isArray(value)) return false;
  return value.every((item) => {
    if (!Array.isArray(item)) return allowedIds(item, allowed);
    const command = losslessInteger(item[0]);
    if (command === 4) return allowedIds(item[1], allowed);
    if (command === 6)
      return Array.isArray(item[2]) && (item[2].length === 0 || allowedIds(item[2], allowed));
    return command === 3 || command === 5;
  });
}

/**
 * Create or write values, x2many commands' values included. Odoo takes values through dict(), so
 * values that are not an object (a list of pairs) are refused: the rule could not read them.
 */
function checkValues(value: LosslessValue | undefined, allowed: readonly number[]): void {
  if (value === undefined || value === null || value === false) return;
  if (!isLosslessObject(value))
    refuse("the values are not an object, so the proxy cannot check them against this key's companies");
  for (const [name, entry] of Object.entries(value)) {
    if (name === 'company_id' && (Array.isArray(entry) || !allowedIds(entry, allowed)))
      refuse(
        `company_id in the values names a company outside this key's companies (false shares the record with every company)`,
      );
    if (name === 'company_ids' && !companyCommands(entry, allowed))
      refuse(`company_ids in the values names a company outside this key's companies`);
    if (!Array.isArray(entry)) continue;
    if (!entry.some(Array.isArray)) continue;
    for (const command of entry) {
      // As Odoo compares a command's code: `false` is 0 (create), `true` is 1 (update).
      const kind = commandCode(command);
      if (kind === undefined)
        refuse("an x2many command the proxy cannot read, so it cannot check it against this key's companies");
      if (kind === 0 || kind === 1) checkValues((command as LosslessValue[])[2], allowed);
    }
  }
}

/** A `context` member anywhere inside `value` (a `web_*` specification's). */
function holdsContext(value: LosslessValue | undefined): boolean {
  if (Array.isArray(value)) return value.some(holdsContext);
  if (!isLosslessObject(value)) return false;
  return Object.entries(value).some(([name, item]) => name === 'context' || holdsContext(item));
}

/**
 * The methods that create records: the proxy sets `default_company_id` to the call's current company
 * for them, so a model whose `company_id` has no default of its own (`res.partner`: no company, a
 * record shared with every company) gets the key's company, as an explicit `false` is refused.
 */
const CREATING_METHODS: ReadonlySet<string> = new Set(['create', 'copy', 'web_save', 'name_create']);

/** Sets or checks the context; whether it changed it. */
function checkContext(call: CompanyRuleCall, allowed: readonly number[]): boolean {
  const present = Object.hasOwn(call.kwargs, 'context') ? call.kwargs.context : undefined;
  if (present !== undefined && present !== null && !isLosslessObject(present))
    refuse("the context is not an object, so the proxy cannot scope it to this key's companies");
  const context = isLosslessObject(present) ? present : {};
  for (const key of COMPANY_CONTEXT_KEYS) {
    if (Object.hasOwn(context, key) && !allowedIds(context[key], allowed))
      refuse(`context.${key} names a company outside this key's companies`);
  }
  const asked = Object.hasOwn(context, 'allowed_company_ids') ? context.allowed_company_ids : undefined;
  const everyCompany =
    asked === undefined || asked === null || asked === false || (Array.isArray(asked) && asked.length === 0);
  let changed = false;
  let current = allowed[0] as number;
  if (!everyCompany) {
    // Not a list (one id included, which Odoo code that indexes the list fails on): refused, as
    // the README says, never passed on.
    if (!Array.isArray(asked) || !allowedIds(asked, allowed))
      refuse("context.allowed_company_ids names a company outside this key's companies, or is not a list");
    current = losslessInteger(asked[0]) as number;
  } else {
    setMember(
      context,
      'allowed_company_ids',
      allowed.map((id) => new JsonNumber(String(id))),
    );
    changed = true;
  }
  if (CREATING_METHODS.has(call.method) && !Object.hasOwn(context, 'default_company_id')) {
    setMember(context, 'default_company_id', new JsonNumber(String(current)));
    changed = true;
  }
  if (changed && context !== present) setMember(call.kwargs, 'context', context);
  return changed;
}

/** The refusal of a database the key's `companies` do not name. */
export function companyDatabaseRefusal(db: string): KeyPolicyRefusedError {
  return callRefusal(
    'company',
    `database ${JSON.stringify(db.slice(0, 100))} is not in this key's companies`,
  );
}

/**
 * The company rule on one call to `call.db`, `companies` being the key's map. Sets the context in
 * `call.kwargs` when it must (the caller then writes the changed arguments).
 *
 * @example
 * companyRule(new Map([['erp_a', [1]]]), { method: 'search_read', db: 'erp_a', kwargs: {} })
 * // { changed: true }, kwargs now {"context": {"allowed_company_ids": [1]}}
 */
export function companyRule(
  companies: ReadonlyMap<string, readonly number[]>,
  call: CompanyRuleCall,
): CompanyDecision {
  const allowed = companies.get(call.db);
  if (allowed === undefined) return { refusal: companyDatabaseRefusal(call.db) };
  try {
    const shape = CALL_SHAPES.get(call.method);
    const positional = call.args === undefined ? [] : call.args;
    if (
      call.method.startsWith('web_') &&
      (holdsContext(positional as LosslessValue[]) ||
        Object.entries(call.kwargs).some(([name, value]) => name !== 'context' && holdsContext(value)))
    )
      refuse("a context nested in the arguments of a web_ method is not scoped to this key's companies");
    for (const { role, value } of shape === undefined ? [] : callArguments(shape, call.args, call.kwargs)) {
      if (role === 'values') checkValues(value, allowed);
      if (role === 'values_list')
        for (const values of Array.isArray(value) ? value : [value]) checkValues(values, allowed);
    }
    return { changed: checkContext(call, allowed) };
  } catch (error) {
    if (error instanceof Refused) return { refusal: error.error };
    throw error;
  }
}
