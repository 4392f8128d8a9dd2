/**
 * @module core/policy/call-shapes
 * The ERP methods whose use of fields the key policies' `fields` rule understands (docs/guide/policies.md, "Methods, fields and companies"
 * lists them), and where each names fields: its positional parameters after the ids (v1 `params`,
 * MCP `call_method`'s `args`) and their names (v1 `keyword`, v2 `kwargs`, every MCP tool). A role
 * says what a parameter holds; a value of another shape in that place is not read as one (ERP 16-19
 * and 20 put different parameters at some places of `read_group`, each read by its own shape).
 * On a model with field rules, a method not listed here is refused (its field use is not seen).
 */
import { type LosslessValue, losslessInteger } from '../../platform/lossless-json.ts';

/** What a parameter holds, for the rules. */
export type ParamRole =
  /** A domain: leaves name (dotted) fields; `any` / `not any` hold sub-domains. */
  | 'domain'
  /** A `having` domain: leaves name aggregate specs (`__count`, `amount:sum`; 19's `formatted_read_group`, 20's `read_group`). */
  | 'having'
  /** A list of field names or specs (`vat`, `amount:sum`, `total:sum(amount)`, `date:month`). */
  | 'fields'
  /** A list of fields, or (17+) a specification `{field: {fields: {...}}}`. */
  | 'spec'
  /** An `order` string (`name desc, vat`). */
  | 'order'
  /** Field values of one record. */
  | 'values'
  /** Field values of one record or a list of them (`create`). */
  | 'values_list'
  /** `export_data`'s columns (`partner_id/vat`, `email.id`: Odoo's rewrite applies): refused, never filtered (its rows are positional). */
  | 'export'
  /** Text a method compares with names (`name_search`'s `name`): a string, nothing else. */
  | 'text'
  /** A comparison operator (`name_search`'s): a plain one, never `any` with a domain. */
  | 'operator'
  /** Nothing the rules read (an offset, a limit, a flag). */
  | 'other';

/** How an answer of a method carries fields. */
export type AnswerShape =
  /** A list of records. */
  | 'records'
  /** `web_search_read`'s `{length, records}`. */
  | 'web_records'
  /** An object keyed by field name (`fields_get`, `default_get`). */
  | 'by_field'
  /** A list of groups whose keys are fields or `field:aggregate`. */
  | 'groups'
  /** No field (ids, counts, `true`, display names). */
  | 'none';

/** One understood method. */
export interface CallShape {
  /** A record method: v1's and `call_method`'s `params[0]` are the ids. */
  readonly record: boolean;
  /** Its parameters after the ids, in order: name and role (several names may share a place). */
  readonly params: readonly (readonly [name: string, role: ParamRole])[];
  /**
   * Other names a parameter is passed by: ERP 16-18's `args` of `name_search`, 16's `fields` of
   * `web_search_read`, 19's `fields` and res.partner's `default_fields` of `default_get`.
   */
  readonly aliases?: readonly (readonly [name: string, role: ParamRole])[];
  readonly answer: AnswerShape;
  /**
   * Fields its answer carries whatever the arguments say (`name_search` and `name_get` answer
   * display names): checked as if the call named them.
   */
  readonly reads?: readonly string[];
}

const shape = (
  record: boolean,
  answer: AnswerShape,
  params: readonly (readonly [string, ParamRole])[],
  aliases?: readonly (readonly [string, ParamRole])[],
): CallShape => Object.freeze({ record, answer, params, ...(aliases ? { aliases } : {}) });

const NO_FIELDS_RECORD = shape(true, 'none', []);

/** `base` whose answer carries `fields` (display names) whatever its arguments say. */
const reading = (base: CallShape, fields: readonly string[]): CallShape =>
  Object.freeze({ ...base, reads: Object.freeze([...fields]) });

/**
 * The understood methods (their Odoo 16-20 signatures). `read_group`'s places hold 16-19's
 * `fields, groupby, offset, limit, orderby, lazy` or 20's `groupby, aggregates, having, offset,
 * limit, order`: each place is read by both roles' shapes.
 */
export const CALL_SHAPES: ReadonlyMap<string, CallShape> = new Map<string, CallShape>([
  // search(args, offset, limit, order, count) in 16; search(domain, ...) in 17+.
  [
    'search',
    shape(
      false,
      'none',
      [
        ['domain', 'domain'],
        ['offset', 'other'],
        ['limit', 'other'],
        ['order', 'order'],
        ['count', 'other'],
      ],
      [['args', 'domain']],
    ),
  ],
  [
    'search_count',
    shape(
      false,
      'none',
      [
        ['domain', 'domain'],
        ['limit', 'other'],
      ],
      [['args', 'domain']],
    ),
  ],
  // search_read(domain, fields, offset, limit, order, **read_kwargs): read's `load`.
  [
    'search_read',
    shape(
      false,
      'records',
      [
        ['domain', 'domain'],
        ['fields', 'fields'],
        ['offset', 'other'],
        ['limit', 'other'],
        ['order', 'order'],
      ],
      [['load', 'other']],
    ),
  ],
  [
    'search_fetch',
    shape(false, 'none', [
      ['domain', 'domain'],
      ['field_names', 'fields'],
      ['offset', 'other'],
      ['limit', 'other'],
      ['order', 'order'],
    ]),
  ],
  [
    'read',
    shape(true, 'records', [
      ['fields', 'fields'],
      ['load', 'other'],
    ]),
  ],
  [
    'fields_get',
    shape(false, 'by_field', [
      ['allfields', 'fields'],
      ['attributes', 'other'],
    ]),
  ],
  // default_get(fields_list) in 16-18 (res.partner: default_fields; res.users and res.config.settings:
  // fields), default_get(fields) in 19 (odoo/orm/models.py).
  [
    'default_get',
    shape(
      false,
      'by_field',
      [['fields_list', 'fields']],
      [
        ['fields', 'fields'],
        ['default_fields', 'fields'],
      ],
    ),
  ],
  // check_field_access_rights(operation, fields) in 16, (operation, field_names) in 17-19.
  [
    'check_field_access_rights',
    shape(
      false,
      'none',
      [
        ['operation', 'other'],
        ['fields', 'fields'],
      ],
      [['field_names', 'fields']],
    ),
  ],
  [
    'web_search_read',
    shape(
      false,
      'web_records',
      [
        ['domain', 'domain'],
        ['specification', 'spec'],
        ['offset', 'other'],
        ['limit', 'other'],
        ['order', 'order'],
        ['count_limit', 'other'],
      ],
      [['fields', 'spec']],
    ),
  ],
  ['web_read', shape(true, 'records', [['specification', 'spec']])],
  [
    'web_save',
    shape(true, 'records', [
      ['vals', 'values'],
      ['specification', 'spec'],
      ['next_id', 'other'],
    ]),
  ],
  [
    'read_group',
    shape(
      false,
      'groups',
      [
        ['domain', 'domain'],
        ['fields', 'fields'],
        ['groupby', 'fields'],
        ['offset', 'having'],
        ['limit', 'other'],
        ['orderby', 'order'],
        ['lazy', 'order'],
      ],
      [
        ['aggregates', 'fields'],
        ['having', 'having'],
        ['order', 'order'],
      ],
    ),
  ],
  [
    'formatted_read_group',
    shape(false, 'groups', [
      ['domain', 'domain'],
      ['groupby', 'fields'],
      ['aggregates', 'fields'],
      ['having', 'having'],
      ['offset', 'other'],
      ['limit', 'other'],
      ['order', 'order'],
    ]),
  ],
  [
    'name_search',
    reading(
      shape(
        false,
        'none',
        [
          ['name', 'text'],
          ['domain', 'domain'],
          ['operator', 'operator'],
          ['limit', 'other'],
        ],
        [['args', 'domain']],
      ),
      ['display_name'],
    ),
  ],
  ['create', shape(false, 'none', [['vals_list', 'values_list']])],
  // write(vals); res.users and res.company name it `values` on 16-18.
  ['write', shape(true, 'none', [['vals', 'values']], [['values', 'values']])],
  ['copy', shape(true, 'none', [['default', 'values']])],
  ['export_data', shape(true, 'none', [['fields_to_export', 'export']])],
  ['unlink', NO_FIELDS_RECORD],
  ['exists', NO_FIELDS_RECORD],
  ['name_get', reading(NO_FIELDS_RECORD, ['display_name'])],
  // get_metadata answers who created and last wrote each record: their display names.
  ['get_metadata', reading(NO_FIELDS_RECORD, ['create_uid', 'write_uid'])],
  ['action_archive', NO_FIELDS_RECORD],
  ['action_unarchive', NO_FIELDS_RECORD],
  ['toggle_active', NO_FIELDS_RECORD],
  [
    'check_access_rights',
    shape(false, 'none', [
      ['operation', 'other'],
      ['raise_exception', 'other'],
    ]),
  ],
  ['check_access', shape(true, 'none', [['operation', 'other']])],
  ['has_access', shape(true, 'none', [['operation', 'other']])],
]);

/** The methods the `fields` rule understands, for the documentation (docs/guide/policies.md, "Methods, fields and companies"). */
export const FIELD_RULE_METHODS: readonly string[] = Object.freeze([...CALL_SHAPES.keys()]);

/** One argument of a call, with where it came from (for a rewrite) and its role. */
export interface CallArgument {
  readonly role: ParamRole;
  readonly value: LosslessValue;
}

/**
 * The arguments of a call the rules read, with their roles: the positional ones after the ids (by
 * place) and the named ones (by name or alias). A name the shape does not know has no role.
 */
export function callArguments(
  shape: CallShape,
  args: readonly LosslessValue[] | undefined,
  kwargs: { readonly [name: string]: LosslessValue } | undefined,
): CallArgument[] {
  const found: CallArgument[] = [];
  const positional = args === undefined ? [] : shape.record ? args.slice(1) : args;
  positional.forEach((value, index) => {
    const param = shape.params[index];
    if (param !== undefined && param[1] !== 'other') found.push({ role: param[1], value });
  });
  if (kwargs !== undefined) {
    for (const [name, role] of [...shape.params, ...(shape.aliases ?? [])]) {
      if (role === 'other' || !Object.hasOwn(kwargs, name)) continue;
      found.push({ role, value: kwargs[name] as LosslessValue });
    }
  }
  return found;
}

/** Ids as a record method's first argument takes them: an id, or a list of ids. */
function isIds(value: LosslessValue | undefined): boolean {
  if (losslessInteger(value) !== undefined) return true;
  return Array.isArray(value) && value.every((id) => losslessInteger(id) !== undefined);
}

/** Whether a call carries an argument besides its ids (first, or `ids`) and its `context`. */
export function carriesArguments(call: {
  readonly args?: readonly LosslessValue[] | undefined;
  readonly kwargs?: { readonly [name: string]: LosslessValue } | undefined;
}): boolean {
  const { args, kwargs = {} } = call;
  if (args !== undefined && (args.length > 1 || (args.length === 1 && !isIds(args[0])))) return true;
  return Object.keys(kwargs).some((name) => name !== 'context' && !(name === 'ids' && isIds(kwargs.ids)));
}

/**
 * The code of an x2many command (`(0, 0, values)` create, `(1, id, values)` update, 2-6 the others),
 * as Odoo compares it: Python's `False == 0` and `True == 1`, so `[false, 0, {...}]` creates.
 * `undefined`: no command code (Odoo would refuse the command, or read it otherwise).
 */
export function commandCode(command: LosslessValue | undefined): number | undefined {
  if (!Array.isArray(command)) return undefined;
  const [code] = command;
  if (code === false) return 0;
  if (code === true) return 1;
  const number = losslessInteger(code);
  return number !== undefined && number >= 0 && number <= 6 ? number : undefined;
}
