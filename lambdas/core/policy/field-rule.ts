/**
 * @module core/policy/field-rule
 * The `fields` rule's request side (docs/guide/policies.md, "What each rule reads"): a field the
 * key's rule for a model denies (`deny`), or does not allow (`allow`), may not be named wherever
 * the proxy can see a field in a call. Each argument is read by its reader
 * (core/policy/odoo-arguments.ts, written from Odoo's own parsing): `fields` lists and field specs
 * (`amount:sum`, `total:sum(amount)`, `date:month`), domain leaves (every segment of a dotted
 * path; `any` / `not any` sub-domains), `having` leaves (aggregate specs), `order` strings,
 * `groupby` and aggregates, 17+ specifications (nested ones on the relation's model, their `order`
 * and `domain`), create and write values (x2many commands' values on the relation's model) and
 * `export_data`'s columns after Odoo's own rewrite. On a model with field rules, a method outside
 * `CALL_SHAPES` is refused: its field use is not seen. (Contexts are read by
 * core/policy/unreadable.ts: a key with field rules may send only the documented keys.)
 *
 * A field is denied on a model by the rule for that model, and also where the model carries a
 * denied field by a related path or by delegation (`res.users`' `email` is `partner_id.email`:
 * `fields_get`'s `related` says so). So each model a call reaches is looked up once (its fields,
 * their relations and related paths: {@link FieldsOf}, the ERP's `fields_get`, cached:
 * core/policy/fields-lookup.ts), and every dotted path is followed to the model it ends on.
 */
import type { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { type FieldRule, fieldDenied } from '../../platform/key-policy.ts';
import { isLosslessObject, JsonNumber, type LosslessValue } from '../../platform/lossless-json.ts';
import { type ModelRules, ruleFor } from '../../platform/model-rules.ts';
import {
  CALL_SHAPES,
  type CallShape,
  callArguments,
  carriesArguments,
  commandCode,
  type ParamRole,
} from './call-shapes.ts';
import {
  exportFieldPath,
  havingFieldPaths,
  orderFieldPaths,
  specAlias,
  specFieldPaths,
} from './odoo-arguments.ts';
import { callRefusal, shownName } from './refusal.ts';

/** What `fields_get` tells the rules of one field: the model it relates to, and its related path. */
export interface FieldInfo {
  /** The comodel of a relational field. */
  readonly relation?: string;
  /** The dotted path a related or delegated field reads (`partner_id.email`). */
  readonly related?: string;
}

/** The fields of a model (an empty map: the ERP would not tell), from the ERP's `fields_get`. */
export type FieldsOf = (model: string) => Promise<ReadonlyMap<string, FieldInfo>>;

/** Whether a field of one model is denied to the key. */
export type FieldTest = (field: string) => boolean;

/**
 * What the field rule decided of a call: its refusal, or the test of the call's model's fields for
 * its answer, with the aliases its aggregate specs named (answer members to keep).
 */
export type FieldDecision =
  | { readonly refusal: KeyPolicyRefusedError }
  | {
      readonly refusal?: undefined;
      readonly denied: FieldTest | undefined;
      readonly aliases?: ReadonlySet<string>;
    };

/** The call the field rule reads. */
export interface FieldRuleCall {
  readonly model: string;
  readonly method: string;
  /** The positional arguments (v1 `params`, `call_method`'s `args`), ids first for a record method. */
  readonly args?: readonly LosslessValue[];
  readonly kwargs?: { readonly [name: string]: LosslessValue };
}

/** How deep related paths are followed into related paths (a related field of a related field...). */
const MAX_RELATED_DEPTH = 4;

class Refused {
  constructor(readonly error: KeyPolicyRefusedError) {}
}

/** The fields denied on one model: the test, and whether it denies any (`false`: the model is not ruled). */
interface ModelDenial {
  readonly test: FieldTest;
  readonly any: boolean;
}

/** One inspection of one call: each model's denied fields worked out once. */
class Inspection {
  private readonly denials = new Map<string, Promise<ModelDenial>>();
  /** The aliases of `alias:agg(field)` specs on the call's model: answer members, not fields. */
  readonly aliases = new Set<string>();

  constructor(
    private readonly rules: ModelRules<FieldRule>,
    private readonly fieldsOf: FieldsOf,
  ) {}

  refuse(field: string, model: string): never {
    throw new Refused(
      callRefusal('field', `field ${shownName(field)} of ${shownName(model)} is denied to this key`),
    );
  }

  private cannotRead(model: string): never {
    throw new Refused(
      callRefusal(
        'field',
        `the proxy cannot read the fields of ${shownName(model)} (the ERP did not describe them), so it cannot check this key's field rules there`,
      ),
    );
  }

  /** A value of a JSON type Odoo reads otherwise than the proxy would (a dict iterated for its keys...). */
  unreadable(what: string): never {
    throw new Refused(
      callRefusal(
        'field',
        `${what} is not of a type the proxy reads, so it cannot check this key's field rules in it`,
      ),
    );
  }

  private cannotFollow(model: string, field: string): never {
    throw new Refused(
      callRefusal(
        'field',
        `the proxy cannot tell which model ${shownName(model)}.${shownName(field)} relates to, so it cannot check this key's field rules through it`,
      ),
    );
  }

  /** Whether the related path `path` from `model` reads a field some rule denies (its own rules, or further related paths). */
  private async readsDenied(model: string, path: readonly string[], depth: number): Promise<boolean> {
    let current = model;
    for (const [index, segment] of path.entries()) {
      if (fieldDenied(ruleFor(this.rules, current), segment)) return true;
      const info = (await this.fieldsOf(current)).get(segment);
      if (info?.related !== undefined) {
        // Deeper than any real related path: not followed, so counted as denied (fail closed).
        if (depth >= MAX_RELATED_DEPTH) return true;
        if (await this.readsDenied(current, info.related.split('.'), depth + 1)) return true;
      }
      if (index === path.length - 1) return false;
      if (info?.relation === undefined) return false;
      current = info.relation;
    }
    return false;
  }

  private async denialOf(model: string): Promise<ModelDenial> {
    const own = ruleFor(this.rules, model);
    const carried = new Set<string>();
    const fields = await this.fieldsOf(model);
    // Which fields the model carries is known only from its fields: an ERP that would not tell
    // them (the lookup refused) leaves the call unreadable (fail closed).
    if (fields.size === 0) this.cannotRead(model);
    for (const [name, info] of fields) {
      if (fieldDenied(own, name)) continue;
      // A relational field's value shows its comodel's display names (a many2one's `[id, name]`, a
      // many2many's group labels and export cells): denied where those are.
      const shows = info.relation !== undefined && (await this.namesDenied(info.relation));
      if (
        shows ||
        (info.related !== undefined && (await this.readsDenied(model, info.related.split('.'), 1)))
      )
        carried.add(name);
    }
    // A display name is built from the record's name: a model that carries a denied `name` (res.users'
    // is its partner's) shows it in `display_name` too.
    if (
      !fieldDenied(own, 'display_name') &&
      fields.has('name') &&
      (carried.has('name') || fieldDenied(own, 'name'))
    )
      carried.add('display_name');
    if (carried.size === 0) return { test: (field) => fieldDenied(own, field), any: own !== undefined };
    return { test: (field) => fieldDenied(own, field) || carried.has(field), any: true };
  }

  /**
   * Whether `model`'s display names are denied: its rule denies `display_name`, or it carries a
   * denied `name` by a related path (one level: res.users' name is its partner's).
   */
  private async namesDenied(model: string): Promise<boolean> {
    const own = ruleFor(this.rules, model);
    if (fieldDenied(own, 'display_name')) return true;
    // Only a rule that denies some model's `name` can make a related `name` denied: without one, no
    // lookup of the comodel is needed.
    if (!namesRuled(this.rules)) return false;
    const name = (await this.fieldsOf(model)).get('name');
    return (
      name?.related !== undefined &&
      (await this.readsDenied(model, name.related.split('.'), MAX_RELATED_DEPTH - 1))
    );
  }

  /** The fields denied on `model`: its own rule's, and those it carries by a related path. */
  denied(model: string): Promise<ModelDenial> {
    let denial = this.denials.get(model);
    if (denial === undefined) {
      denial = this.denialOf(model);
      this.denials.set(model, denial);
    }
    return denial;
  }

  /** `field` of `model`: refused when denied. */
  private async field(model: string, field: string): Promise<void> {
    if ((await this.denied(model)).test(field)) this.refuse(field, model);
  }

  /** The model `field` of `model` relates to; refused when it cannot be told (fail closed). */
  async relation(model: string, field: string): Promise<string> {
    const relation = (await this.fieldsOf(model)).get(field)?.relation;
    if (relation === undefined) this.cannotFollow(model, field);
    return relation;
  }

  /**
   * A dotted path from `model`, every segment checked on its model. A known field that is no
   * relation ends the path when one segment follows it (a date part such as
   * `create_date.year_number`, a property of a properties field); anything else that cannot be
   * followed (an unknown field, more segments) cannot be attributed, and is refused.
   */
  async path(model: string, segments: readonly string[]): Promise<void> {
    let current = model;
    for (const [index, segment] of segments.entries()) {
      await this.field(current, segment);
      const rest = segments.length - index - 1;
      if (rest === 0) return;
      const info = (await this.fieldsOf(current)).get(segment);
      if (info?.relation === undefined) {
        // A known field that is not relational, followed by one segment: a date part or a property.
        if (info !== undefined && rest === 1) return;
        this.cannotFollow(current, segment);
      }
      current = info.relation;
    }
  }

  private async paths(model: string, paths: readonly string[][]): Promise<void> {
    for (const path of paths) await this.path(model, path);
  }

  async domain(model: string, value: LosslessValue | undefined, leafPaths = domainLeafPaths): Promise<void> {
    if (isAbsent(value)) return;
    if (!Array.isArray(value)) this.unreadable('a domain');
    for (const leaf of value) {
      if (typeof leaf === 'string') continue; // '&', '|', '!'
      if (!Array.isArray(leaf) || leaf.length !== 3) this.unreadable('a domain term');
      // (1, '=', 1) and (0, '=', 1) are Odoo's true and false leaves.
      if (typeof leaf[0] !== 'string') {
        if (isLosslessObject(leaf[0]) || Array.isArray(leaf[0])) this.unreadable('a domain term');
        continue;
      }
      await this.paths(model, leafPaths(leaf[0]));
      // Odoo 19 lower-cases operators; `any!` and `not any!` run their sub-domain as superuser.
      const operator = typeof leaf[1] === 'string' ? leaf[1].trim().toLowerCase() : '';
      if (SUB_DOMAIN_OPERATOR.test(operator)) {
        let related = model;
        for (const segment of leaf[0].split('.')) related = await this.relation(related, segment);
        await this.domain(related, leaf[2]);
        continue;
      }
      if (leafPaths !== domainLeafPaths) continue;
      // `child_of` and `parent_of` with text search the names of the path's model (a partner's
      // display name holds its email and VAT): an oracle the proxy cannot attribute.
      if ((operator === 'child_of' || operator === 'parent_of') && holdsText(leaf[2]))
        throw new Refused(
          callRefusal(
            'field',
            `${shownName(leaf[0])} ${operator} text searches names, which this key's field rules cannot check: give ids`,
          ),
        );
      await this.relationalValue(model, leaf[0], leaf[2]);
    }
  }

  /**
   * A leaf comparing a relational field with text (`['parent_id', '=ilike', 'a@x.com']`) makes Odoo
   * search the comodel's names (`_rec_names_search`: a partner's email, VAT and ref): where the comodel
   * has denied fields, the proxy cannot tell which it reads, and refuses.
   */
  private async relationalValue(
    model: string,
    path: string,
    value: LosslessValue | undefined,
  ): Promise<void> {
    if (!holdsText(value)) return;
    const segments = path.split('.');
    let current = model;
    for (const segment of segments.slice(0, -1)) {
      const relation = (await this.fieldsOf(current)).get(segment)?.relation;
      if (relation === undefined) return;
      current = relation;
    }
    const relation = (await this.fieldsOf(current)).get(segments[segments.length - 1] as string)?.relation;
    if (relation !== undefined && (await this.denied(relation)).any)
      throw new Refused(
        callRefusal(
          'field',
          `${shownName(path)} is compared with text, which makes the ERP search ${shownName(relation)}'s names (and fields this key may not see there): compare it with ids`,
        ),
      );
  }

  async fields(model: string, value: LosslessValue | undefined): Promise<void> {
    if (isAbsent(value)) return;
    if (typeof value === 'string') return this.paths(model, specFieldPaths(value));
    if (!Array.isArray(value)) this.unreadable('a list of fields');
    for (const entry of value) {
      if (typeof entry !== 'string') this.unreadable('a list of fields');
      await this.paths(model, specFieldPaths(entry));
      const alias = specAlias(entry);
      if (alias !== undefined) this.aliases.add(alias);
    }
  }

  async order(model: string, value: LosslessValue | undefined): Promise<void> {
    if (isAbsent(value)) return;
    if (typeof value !== 'string') this.unreadable('an order');
    for (const path of orderFieldPaths(value)) {
      // 17-18's read_group orders by `<groupby>_count`, its rewrite of `__count`, when no field has that name.
      const [name = ''] = path;
      if (path.length === 1 && name.endsWith('_count') && !(await this.fieldsOf(model)).has(name)) continue;
      await this.path(model, path);
    }
  }

  /** A 17+ specification (`{field: {fields, order, domain, context}}`, at any depth), or 16's field list. */
  async spec(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!isLosslessObject(value)) return this.fields(model, value);
    for (const [name, entry] of Object.entries(value)) {
      await this.field(model, name);
      if (!isLosslessObject(entry)) this.unreadable('a specification entry');
      const nested = entry.fields !== undefined || entry.order !== undefined || entry.domain !== undefined;
      if (!nested) continue;
      const related = await this.relation(model, name);
      await this.spec(related, entry.fields);
      await this.order(related, entry.order);
      await this.domain(related, entry.domain);
    }
  }

  async values(model: string, value: LosslessValue | undefined): Promise<void> {
    if (isAbsent(value)) return;
    if (!isLosslessObject(value)) this.unreadable("a record's values");
    for (const [name, entry] of Object.entries(value)) {
      await this.field(model, name);
      if (!Array.isArray(entry) || !entry.some(Array.isArray)) continue;
      // x2many commands: (0, 0, values) and (1, id, values) carry the relation's values, which Odoo
      // takes through dict(): an object, or a list of pairs it would read as one (refused). A code
      // is read as Odoo compares it (`false` is 0, `true` is 1); a list that is no command is refused.
      const nested: { readonly code: number; readonly values: LosslessValue | undefined }[] = [];
      for (const command of entry) {
        const code = commandCode(command);
        if (code === undefined) this.unreadable('an x2many command');
        if (code === 0 || code === 1) nested.push({ code, values: (command as LosslessValue[])[2] });
      }
      if (nested.length === 0) continue;
      const related = await this.relation(model, name);
      for (const command of nested) {
        if (!isLosslessObject(command.values)) this.unreadable("an x2many command's values");
        await this.values(related, command.values);
        // A record created here gets its defaults from the call's context too.
        if (command.code === 0) await this.contextDefaults(related);
      }
    }
  }

  /**
   * `export_data`'s columns, split as Odoo splits them: a relational segment leads to its model; a
   * field that is not relational exports its value whatever follows it, so the walk ends there.
   */
  async export(model: string, value: LosslessValue | undefined): Promise<void> {
    if (!Array.isArray(value)) this.unreadable("export_data's columns");
    for (const column of value) {
      if (typeof column !== 'string') this.unreadable('an export_data column');
      let current = model;
      const path = exportFieldPath(column);
      for (const [index, segment] of path.entries()) {
        await this.field(current, segment);
        const info = (await this.fieldsOf(current)).get(segment);
        if (info?.relation !== undefined) {
          current = info.relation;
          continue;
        }
        // A known field that is not relational exports its value whatever follows; a segment the
        // lookup does not list (18-19's `props.property`, which Odoo follows) cannot be attributed.
        if (info === undefined && index < path.length - 1) this.cannotFollow(current, segment);
        break;
      }
    }
  }

  async argument(model: string, role: ParamRole, value: LosslessValue): Promise<void> {
    // A number or a flag names no field (and read_group's places hold an offset or a limit on 16-19
    // where 20 has `having` or `order`): nothing to read.
    if (typeof value === 'boolean' || value instanceof JsonNumber) return;
    if (role === 'domain') return this.domain(model, value);
    if (role === 'having') return this.domain(model, value, havingFieldPaths);
    if (role === 'fields') return this.fields(model, value);
    if (role === 'spec') return this.spec(model, value);
    if (role === 'order') return this.order(model, value);
    if (role === 'values') return this.values(model, value);
    if (role === 'export') return this.export(model, value);
    if (role === 'text') {
      if (!isAbsent(value) && typeof value !== 'string') this.unreadable('a name to search');
      return;
    }
    if (role === 'operator') {
      if (isAbsent(value)) return;
      if (typeof value !== 'string' || !NAME_OPERATORS.has(value.trim().toLowerCase()))
        this.unreadable(`the operator ${typeof value === 'string' ? shownName(value) : ''}`.trim());
      return;
    }
    if (role === 'values_list') {
      for (const values of Array.isArray(value) ? value : [value]) await this.values(model, values);
    }
  }

  /** The call's context, for the defaults of the records it creates. */
  context: { readonly [name: string]: LosslessValue } | undefined;

  /**
   * A record created on `model` takes `lang` and `tz` from the same context keys (their defaults),
   * where the model has such fields: checked as those fields.
   */
  async contextDefaults(model: string): Promise<void> {
    const context = this.context;
    if (context === undefined) return;
    const fields = await this.fieldsOf(model);
    for (const key of CONTEXT_DEFAULTED_FIELDS) {
      if (!Object.hasOwn(context, key) || !fields.has(key) || !(await this.denied(model)).test(key)) continue;
      throw new Refused(
        callRefusal(
          'field',
          `context key ${shownName(key)} would set the new record's field ${shownName(key)} of ${shownName(model)}, which is denied to this key: leave it out of the context`,
        ),
      );
    }
  }
}

const ruledNames = new WeakMap<ModelRules<FieldRule>, boolean>();

/** Whether some rule of `rules` denies a field named `name` (a deny list with it, an allow list without it). */
function namesRuled(rules: ModelRules<FieldRule>): boolean {
  let ruled = ruledNames.get(rules);
  if (ruled === undefined) {
    ruled = [
      ...rules.exact.values(),
      ...rules.globs.map(([, rule]) => rule),
      ...(rules.star ? [rules.star] : []),
    ].some((rule) => fieldDenied(rule, 'name'));
    ruledNames.set(rules, ruled);
  }
  return ruled;
}

/** The operators `name_search` compares names with (another, such as `any`, would take a domain as its name). */
const NAME_OPERATORS: ReadonlySet<string> = new Set([
  'ilike',
  'like',
  '=',
  '!=',
  '=like',
  '=ilike',
  'not ilike',
  'not like',
]);

/** The domain operators whose right side is a sub-domain on the relation (`any!`: 19, as superuser). */
const SUB_DOMAIN_OPERATOR = /^(?:not )?any!?$/;

/**
 * The readable context keys that are also field defaults (`res.partner`'s and `res.users`' `lang`
 * and `tz` default to the context's): a create or write that sends them may set those fields.
 */
const CONTEXT_DEFAULTED_FIELDS = ['lang', 'tz'] as const;

/** The methods that create records on the call's model (their defaults read the context). */
const CREATING_METHODS: ReadonlySet<string> = new Set(['create', 'copy', 'web_save', 'name_create']);

/** Whether a domain value is text, or a list holding text. */
function holdsText(value: LosslessValue | undefined): boolean {
  return (
    typeof value === 'string' || (Array.isArray(value) && value.some((item) => typeof item === 'string'))
  );
}

/** An optional argument left out (`None`, `False` in Odoo). */
function isAbsent(value: LosslessValue | undefined): boolean {
  return value === undefined || value === null || value === false;
}

/** A domain leaf's field: a dotted path. */
function domainLeafPaths(left: string): string[][] {
  return [left.split('.')];
}

/** Whether any rule of `rules` could apply to a call (every key with `fields` has at least one). */
function hasRules(rules: ModelRules<FieldRule>): boolean {
  return rules.exact.size > 0 || rules.globs.length > 0 || rules.star !== undefined;
}

/**
 * The policy's `fields` (`rules`) on a call: its refusal when it names a denied field, else the test
 * of the call's model's fields (its answer's filter; `undefined` when none is denied there).
 * `shape` is the method's, from `CALL_SHAPES` (`undefined`: not understood).
 *
 * @example
 * await fieldRule(policy.fields, { model: 'res.partner', method: 'search_read', kwargs: { fields: ['vat'] } }, fieldsOf)
 * // { refusal: KeyPolicyRefusedError: Refused by this key's policy: field vat of res.partner is denied to this key }
 */
export async function fieldRule(
  rules: ModelRules<FieldRule>,
  call: FieldRuleCall,
  fieldsOf: FieldsOf,
  shape: CallShape | undefined = CALL_SHAPES.get(call.method),
): Promise<FieldDecision> {
  if (!hasRules(rules)) return { denied: undefined };
  const inspection = new Inspection(rules, fieldsOf);
  try {
    const denial = await inspection.denied(call.model);
    if (shape === undefined) {
      // On any model a method the rule does not read may reach a ruled one through its arguments
      // (a specification, a many2one path, a domain): with none but ids and context, it names no field.
      if (!denial.any && !carriesArguments(call)) return { denied: undefined };
      return {
        refusal: callRefusal(
          'field',
          denial.any
            ? `this key has field rules for ${shownName(call.model)}, and the proxy cannot see which fields ${shownName(call.method)} uses (docs/guide/policies.md lists the methods it can)`
            : `this key has field rules, and the proxy cannot see which fields ${shownName(call.method)} names in its arguments (docs/guide/policies.md lists the methods it can; call it with its ids only)`,
        ),
      };
    }
    if (isLosslessObject(call.kwargs?.context)) inspection.context = call.kwargs.context;
    if (CREATING_METHODS.has(call.method)) await inspection.contextDefaults(call.model);
    for (const field of shape.reads ?? []) if (denial.test(field)) inspection.refuse(field, call.model);
    for (const { role, value } of callArguments(shape, call.args, call.kwargs))
      await inspection.argument(call.model, role, value);
    if (!denial.any) return { denied: undefined };
    return inspection.aliases.size === 0
      ? { denied: denial.test }
      : { denied: denial.test, aliases: inspection.aliases };
  } catch (error) {
    if (error instanceof Refused) return { refusal: error.error };
    throw error;
  }
}

/**
 * The test of `model`'s denied fields under `rules` (its own rule and the fields it carries by a
 * related path), or `undefined` when none is denied: what the MCP read tools take out of the field
 * lists they send.
 */
export async function deniedFieldsOf(
  rules: ModelRules<FieldRule>,
  model: string,
  fieldsOf: FieldsOf,
): Promise<FieldTest | undefined> {
  if (!hasRules(rules)) return undefined;
  const decision = await fieldRule(rules, { model, method: 'fields_get' }, fieldsOf);
  return decision.refusal === undefined ? decision.denied : undefined;
}
