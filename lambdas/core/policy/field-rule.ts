/**
 * @module core/policy/field-rule
 * The `fields` rule's request side (docs/guide/policies.md, "Methods, fields and companies"): a denied field may not be named wherever
 * the proxy can see a field in a call. Read here: `fields` lists and field specs (`amount:sum`,
 * `total:sum(amount)`, `date:month`), domain leaves (every segment of a dotted path; `any` / `not
 * any` sub-domains), `order`, `groupby` and aggregates, 17+ specifications (nested ones on the
 * relation's model, their `order` and `context`), create and write values (x2many commands' values
 * on the relation's model), `export_data`'s paths, `default_<field>` context keys, and the context
 * keys that make a partner's `display_name` show a field (`show_email`...). On a model with field
 * rules, a method outside `CALL_SHAPES` is refused: its field use is not seen.
 *
 * A path through a relation needs the relation's model: asked of {@link FieldsOf} (the ERP's
 * `fields_get`, cached: core/policy/fields-lookup.ts), and only when a later segment bears a name
 * some rule denies, so most paths cost no lookup.
 */
import type { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { isLosslessObject, type LosslessValue } from '../../platform/lossless-json.ts';
import { type ModelRules, ruleFor } from '../../platform/model-rules.ts';
import { CALL_SHAPES, type CallShape, callArguments, contextOf, type ParamRole } from './call-shapes.ts';
import { callRefusal, shownName } from './refusal.ts';

/** The relation of each field of a model (`undefined`: not relational), from the ERP's `fields_get`. */
export type FieldsOf = (model: string) => Promise<ReadonlyMap<string, string | undefined>>;

/** What the field rule reads of a call. */
export interface FieldRuleCall {
  readonly model: string;
  readonly method: string;
  /** The positional arguments (v1 `params`, `call_method`'s `args`), ids first for a record method. */
  readonly args?: readonly LosslessValue[];
  readonly kwargs?: { readonly [name: string]: LosslessValue };
}

/**
 * The context keys that make `res.partner`'s `display_name` show a field (its
 * `_compute_display_name`, Odoo 16-19): a key whose field is denied on `res.partner` is refused.
 */
export const PARTNER_DISPLAY_KEYS: ReadonlyMap<string, readonly string[]> = new Map([
  ['show_email', ['email']],
  ['show_vat', ['vat']],
  ['show_address', ['street', 'street2', 'zip', 'city', 'state_id', 'country_id']],
  ['show_address_only', ['street', 'street2', 'zip', 'city', 'state_id', 'country_id']],
  ['address_inline', ['street', 'street2', 'zip', 'city', 'state_id', 'country_id']],
]);

const PARTNER = 'res.partner';
/** What separates field names in a spec, an order or a path. */
const NAME_SPLIT = /[\s.,:/()]+/;

class Refused {
  constructor(readonly error: KeyPolicyRefusedError) {}
}

/** Every name any rule of `rules` denies (a path is followed only when a later segment is one). */
const deniedNames = new WeakMap<ModelRules<ReadonlySet<string>>, ReadonlySet<string>>();

function namesDenied(rules: ModelRules<ReadonlySet<string>>): ReadonlySet<string> {
  let names = deniedNames.get(rules);
  if (names === undefined) {
    names = new Set(
      [
        ...rules.exact.values(),
        ...rules.globs.map(([, set]) => set),
        ...(rules.star ? [rules.star] : []),
      ].flatMap((set) => [...set]),
    );
    deniedNames.set(rules, names);
  }
  return names;
}

/** One inspection of one call. */
class Inspection {
  private readonly names: ReadonlySet<string>;

  constructor(
    private readonly rules: ModelRules<ReadonlySet<string>>,
    private readonly fieldsOf: FieldsOf,
  ) {
    this.names = namesDenied(rules);
  }

  private refuse(field: string, model: string): never {
    throw new Refused(
      callRefusal('field', `field ${shownName(field)} of ${shownName(model)} is denied to this key`),
    );
  }

  /** Whether `value` names (as a string's word or an object's member) any denied name anywhere. */
  mentions(value: LosslessValue | undefined): boolean {
    if (typeof value === 'string') return value.split(NAME_SPLIT).some((word) => this.names.has(word));
    if (Array.isArray(value)) return value.some((item) => this.mentions(item));
    if (isLosslessObject(value))
      return Object.entries(value).some(([name, item]) => this.names.has(name) || this.mentions(item));
    return false;
  }

  /** The model `field` of `model` relates to; refused when it cannot be told (fail closed). */
  async relation(model: string, field: string): Promise<string> {
    const relation = (await this.fieldsOf(model)).get(field);
    if (relation === undefined) {
      throw new Refused(
        callRefusal(
          'field',
          `the proxy cannot tell which model ${shownName(model)}.${shownName(field)} relates to, so it cannot check this key's field rules through it`,
        ),
      );
    }
    return relation;
  }

  /** A dotted path from `model`; returns the last segment's model when `needLast`. */
  async path(model: string, segments: readonly string[]): Promise<void> {
    let current = model;
    for (const [index, segment] of segments.entries()) {
      if (ruleFor(this.rules, current)?.has(segment)) this.refuse(segment, current);
      const rest = segments.slice(index + 1);
      if (rest.length === 0 || !rest.some((name) => this.names.has(name))) return;
      current = await this.relation(current, segment);
    }
  }

  async domain(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!Array.isArray(value)) return;
    for (const leaf of value) {
      if (!Array.isArray(leaf) || leaf.length !== 3 || typeof leaf[0] !== 'string') continue;
      const segments = leaf[0].split('.');
      await this.path(model, segments);
      const operator = leaf[1];
      if ((operator === 'any' || operator === 'not any') && this.mentions(leaf[2])) {
        let related = model;
        for (const segment of segments) related = await this.relation(related, segment);
        await this.domain(related, leaf[2]);
      }
    }
  }

  /** A field spec: `name`, `name:agg`, `alias:agg(name)`, `date:month`, a dotted path. */
  async fieldSpec(model: string, spec: string): Promise<void> {
    const [head = '', ...tail] = spec.split(':');
    await this.path(model, head.trim().split('.'));
    const inner = /\(([^)]*)\)/.exec(tail.join(':'))?.[1]?.trim();
    if (inner) await this.path(model, inner.split('.'));
  }

  async fields(model: string, value: LosslessValue | undefined): Promise<void> {
    if (typeof value === 'string') return this.fieldSpec(model, value);
    if (!Array.isArray(value)) return;
    for (const entry of value) if (typeof entry === 'string') await this.fieldSpec(model, entry);
  }

  async order(model: string, value: LosslessValue | undefined): Promise<void> {
    if (typeof value !== 'string') return;
    for (const term of value.split(',')) {
      const [name = ''] = term.trim().split(/\s+/);
      if (name !== '') await this.fieldSpec(model, name);
    }
  }

  async spec(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!isLosslessObject(value)) return this.fields(model, value);
    const denied = ruleFor(this.rules, model);
    for (const [name, entry] of Object.entries(value)) {
      if (denied?.has(name)) this.refuse(name, model);
      if (!isLosslessObject(entry) || !this.mentions(entry)) continue;
      const related = await this.relation(model, name);
      await this.spec(related, entry.fields);
      await this.order(related, entry.order);
      await this.domain(related, entry.domain);
      if (isLosslessObject(entry.context)) this.context(related, entry.context);
    }
  }

  async values(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!isLosslessObject(value)) return;
    const denied = ruleFor(this.rules, model);
    for (const [name, entry] of Object.entries(value)) {
      if (denied?.has(name)) this.refuse(name, model);
      if (!Array.isArray(entry) || !this.mentions(entry)) continue;
      // x2many commands: (0, 0, values) and (1, id, values) carry the relation's values.
      const nested = entry.filter(
        (command): command is LosslessValue[] => Array.isArray(command) && isLosslessObject(command[2]),
      );
      if (nested.length === 0) continue;
      const related = await this.relation(model, name);
      for (const command of nested) await this.values(related, command[2]);
    }
  }

  async export(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!Array.isArray(value)) return;
    for (const entry of value) {
      if (typeof entry !== 'string') continue;
      await this.path(
        model,
        entry.split('/').filter((segment) => segment !== '.id' && segment !== 'id'),
      );
    }
  }

  /** `default_<field>` keys of `model`, and a partner's display keys. */
  context(model: string, context: { readonly [name: string]: LosslessValue }): void {
    const denied = ruleFor(this.rules, model);
    const partner = ruleFor(this.rules, PARTNER);
    for (const [name, value] of Object.entries(context)) {
      if (denied !== undefined && name.startsWith('default_') && denied.has(name.slice(8)))
        this.refuse(name.slice(8), model);
      const shows =
        partner === undefined || value === false || value === null
          ? undefined
          : PARTNER_DISPLAY_KEYS.get(name);
      const shown = shows?.find((field) => partner?.has(field));
      if (shown !== undefined) this.refuse(shown, PARTNER);
    }
  }

  async argument(model: string, role: ParamRole, value: LosslessValue): Promise<void> {
    if (role === 'domain') return this.domain(model, value);
    if (role === 'fields') return this.fields(model, value);
    if (role === 'spec') return this.spec(model, value);
    if (role === 'order') return this.order(model, value);
    if (role === 'values') return this.values(model, value);
    if (role === 'export') return this.export(model, value);
    if (role === 'values_list') {
      for (const values of Array.isArray(value) ? value : [value]) await this.values(model, values);
    }
  }
}

/**
 * The refusal of a call by the policy's `fields` (`rules`), or `undefined` when it names no denied
 * field. `shape` is the method's, from `CALL_SHAPES` (`undefined`: not understood).
 *
 * @example
 * await fieldRule(policy.fields, { model: 'res.partner', method: 'search_read', kwargs: { fields: ['vat'] } }, fieldsOf)
 * // KeyPolicyRefusedError: Refused by this key's policy: field vat of res.partner is denied to this key
 */
export async function fieldRule(
  rules: ModelRules<ReadonlySet<string>>,
  call: FieldRuleCall,
  fieldsOf: FieldsOf,
  shape: CallShape | undefined = CALL_SHAPES.get(call.method),
): Promise<KeyPolicyRefusedError | undefined> {
  const inspection = new Inspection(rules, fieldsOf);
  try {
    const context = contextOf(call.kwargs);
    if (context !== undefined) inspection.context(call.model, context);
    if (shape === undefined) {
      if (ruleFor(rules, call.model) === undefined) return undefined;
      return callRefusal(
        'field',
        `this key has field rules for ${shownName(call.model)}, and the proxy cannot see which fields ${shownName(call.method)} uses (docs/guide/policies.md lists the methods it can)`,
      );
    }
    for (const { role, value } of callArguments(shape, call.args, call.kwargs))
      await inspection.argument(call.model, role, value);
    return undefined;
  } catch (error) {
    if (error instanceof Refused) return error.error;
    throw error;
  }
}
