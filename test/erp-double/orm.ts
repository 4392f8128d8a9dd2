/**
 * @module erp-double/orm
 * The ORM methods the double serves (`search`, `read`, `create`, ...), their Python signatures
 * (used to bind JSON-RPC positional arguments and JSON-2 named ones), access rules and context checks.
 */
import { createHash } from 'node:crypto';
import type { Database, Row } from './database.ts';
import { domainMentions, domainWording, matchesDomain, parseDomain, validateDomain } from './domain.ts';
import { accessError, missingError, pyError, userError, validationError } from './errors.ts';
import type { FieldDef, ModelDef } from './models.ts';
import { isPlainObject, type JsonObject, pyNameList, pyRepr, utcNow } from './py.ts';
import { formattedReadGroup, readGroup, readGroupTuples } from './read-group.ts';
import type { ErpMode } from './types.ts';
import { isTwentyOrLater, platformOf } from './versions.ts';

/** Who calls, where, with which context. */
export interface Env {
  db: Database;
  uid: number;
  limited: boolean;
  context: JsonObject;
  mode: ErpMode;
  /** Which protocol carries the call (20+ read binaries differently on each); JSON-RPC when absent. */
  protocol?: 'jsonrpc' | 'json2';
  /** How a 20+ mode reads binaries over JSON-2 (`ErpDoubleOptions.binaries`). */
  binaries?: 'object' | 'inline';
}

/** One Python parameter of a method. */
export interface MethodParam {
  name: string;
  required: boolean;
}

/** A public ORM method. */
export interface MethodSpec {
  /** `@api.model`: no record ids (JSON-2 refuses `ids`). */
  model: boolean;
  /** `@api.readonly`: never writes, so it runs without a transaction snapshot. */
  readonly?: boolean;
  params: readonly MethodParam[];
  /** Name of a `**kwargs` parameter, when the method has one. */
  varKeyword?: string;
  run(env: Env, def: ModelDef, ids: number[], args: JsonObject): unknown;
}

type Operation = 'read' | 'write' | 'create' | 'unlink';

const VERBS: Readonly<Record<Operation, string>> = {
  read: 'access',
  write: 'modify',
  create: 'create',
  unlink: 'delete',
};

/** Raises the AccessError of a limited user doing an admin-only operation, or of anybody on a model no ACL opens. */
export function checkAccess(env: Env, def: ModelDef, operation: Operation): void {
  checkModelAccess(env.limited, def, operation, env.mode);
}

/** `check_access(operation)` for a user who is limited (group_user only) or not, on Odoo `mode`. */
export function checkModelAccess(
  limited: boolean,
  def: ModelDef,
  operation: Operation,
  mode: ErpMode = '19',
): void {
  const level = def.access[operation];
  if (level === 'user' || (level === 'admin' && !limited)) return;
  const group = Number(mode) < 19 ? (def.adminGroupBefore19 ?? def.adminGroup) : def.adminGroup;
  const groups =
    level === 'none'
      ? 'No group currently allows this operation.'
      : `This operation is allowed for the following groups:\n\t- ${group}`;
  throw accessError(
    `You are not allowed to ${VERBS[operation]} '${def.description}' (${def.name}) records.\n\n` +
      `${groups}\n\nContact your administrator to request access if necessary.`,
  );
}

/** Context checks done when the environment is built: language and allowed companies. */
export function checkContext(env: Env): void {
  const lang = env.context.lang;
  if (typeof lang === 'string' && lang !== 'en_US') throw userError(`Invalid language code: ${lang}`);
  const companies = env.context.allowed_company_ids;
  if (companies !== undefined) {
    const list = Array.isArray(companies) ? companies : [companies];
    if (list.some((id) => typeof id !== 'number' || !env.db.row('res.company', id))) {
      throw accessError('Access to unauthorized or invalid companies.');
    }
  }
}

function param(name: string, required = false): MethodParam {
  return { name, required };
}

function toIds(value: unknown): number[] {
  if (value === undefined || value === null || value === false) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((id): id is number => typeof id === 'number');
}

function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (typeof value !== 'number')
    throw pyError('TypeError', `'${name}' must be an integer, not ${pyRepr(value)}`);
  return value;
}

interface OrderTerm {
  field: string;
  descending: boolean;
}

function parseOrder(def: ModelDef, order: string): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const part of order.split(',')) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    const [field, direction] = words;
    const valid =
      field !== undefined &&
      def.fields[field] !== undefined &&
      (direction === undefined || /^(asc|desc)$/i.test(direction)) &&
      (words.length <= 2 || /^nulls\s+(first|last)$/i.test(words.slice(2).join(' ')));
    if (!valid) {
      throw pyError(
        'ValueError',
        `Invalid "order" specified (${order}). A valid "order" specification is a comma-separated list of ` +
          'valid field names (optionally followed by asc/desc for the direction)',
      );
    }
    terms.push({ field, descending: direction?.toLowerCase() === 'desc' });
  }
  return terms;
}

function sortKey(env: Env, def: ModelDef, row: Row, field: string): string | number | null {
  const fieldDef = def.fields[field];
  const raw = env.db.fieldValue(def.name, row, field);
  if (fieldDef?.type === 'many2one' && typeof raw === 'number' && fieldDef.relation) {
    return env.db.displayName(fieldDef.relation, raw);
  }
  if (fieldDef?.type === 'boolean') return raw === true ? 1 : 0;
  if (typeof raw === 'number' || typeof raw === 'string') return raw;
  return null;
}

function compareKeys(
  left: string | number | null,
  right: string | number | null,
  descending: boolean,
): number {
  // PostgreSQL: NULLS LAST when ascending, NULLS FIRST when descending.
  if (left === null || right === null) {
    if (left === right) return 0;
    return left === null ? (descending ? -1 : 1) : descending ? 1 : -1;
  }
  const result =
    typeof left === 'number' && typeof right === 'number'
      ? left - right
      : String(left).localeCompare(String(right), 'en');
  return descending ? -result : result;
}

/** `ids` in the default order of `model` (Odoo reads x2many values in the comodel's `_order`). */
function inModelOrder(env: Env, model: string | undefined, ids: number[]): number[] {
  const def = model === undefined ? undefined : env.db.model(model);
  if (!def) return [...ids];
  const terms = parseOrder(def, def.order);
  const rows = ids.map((id) => ({ id, row: env.db.row(def.name, id) }));
  return rows
    .sort((a, b) => {
      if (!a.row || !b.row) return 0;
      for (const term of terms) {
        const result = compareKeys(
          sortKey(env, def, a.row, term.field),
          sortKey(env, def, b.row, term.field),
          term.descending,
        );
        if (result !== 0) return result;
      }
      return 0;
    })
    .map((entry) => entry.id);
}

/** `_search`: ids of the rows matching the domain, with `active_test`, order, offset and limit. */
export function searchIds(
  env: Env,
  def: ModelDef,
  domain: unknown,
  options: { offset?: unknown; limit?: unknown; order?: unknown } = {},
): number[] {
  const node = parseDomain(domain);
  validateDomain(node, env.db, def.name, domainWording(env.mode));
  const activeTest = def.fields.active !== undefined && env.context.active_test !== false;
  const filterActive = activeTest && !domainMentions(node, 'active');
  const order = typeof options.order === 'string' && options.order.trim() !== '' ? options.order : def.order;
  const terms = parseOrder(def, order);
  const rows = env.db
    .rows(def.name)
    .filter((row) => (!filterActive || row.active === true) && matchesDomain(node, env.db, def.name, row));
  rows.sort((a, b) => {
    for (const term of terms) {
      const result = compareKeys(
        sortKey(env, def, a, term.field),
        sortKey(env, def, b, term.field),
        term.descending,
      );
      if (result !== 0) return result;
    }
    return 0;
  });
  const offset = optionalNumber(options.offset, 'offset') ?? 0;
  const limit = optionalNumber(options.limit, 'limit');
  const sliced = rows.slice(offset, limit === undefined ? undefined : offset + limit);
  return sliced.map((row) => Number(row.id));
}

function humanSize(bytes: number): string {
  const units = ['bytes', 'Kb', 'Mb', 'Gb', 'Tb'];
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(2)} ${units[unit]}`;
}

/**
 * A binary value as a 20+ mode reads it (versions.ts: the two readings): over JSON-2 with
 * `binaries: 'object'`, `{filename, size}` and `content` when the context has
 * `include_binary_content` (odoo/odoo#266082); otherwise the base64 content, `bin_size` ignored.
 */
function binaryValue20(env: Env, name: string, raw: string): unknown {
  if (env.protocol !== 'json2' || env.binaries === 'inline') return raw;
  const size = Buffer.from(raw, 'base64').length;
  const object: JsonObject = { filename: name, size };
  return env.context.include_binary_content === true ? { filename: name, content: raw, size } : object;
}

/** `convert_to_read`: many2one as `[id, name]`, empty as `false`, binary as base64 (or its size; 20+: binaryValue20). */
function readValue(env: Env, def: ModelDef, row: Row, name: string, field: FieldDef, load: unknown): unknown {
  const raw = env.db.fieldValue(def.name, row, name);
  switch (field.type) {
    case 'many2one':
      if (typeof raw !== 'number') return false;
      if (load === '_classic_write') return raw;
      return [raw, env.db.displayName(field.relation ?? '', raw)];
    case 'one2many':
    case 'many2many':
      return Array.isArray(raw) ? inModelOrder(env, field.relation, toIds(raw)) : [];
    case 'integer':
    case 'float':
      return typeof raw === 'number' ? raw : 0;
    case 'boolean':
      return raw === true;
    case 'binary':
      if (typeof raw !== 'string' || raw === '') return false;
      if (isTwentyOrLater(env.mode)) return binaryValue20(env, name, raw);
      if (env.context.bin_size === true || env.context[`bin_size_${name}`] === true) {
        return humanSize(Buffer.from(raw, 'base64').length);
      }
      return raw;
    default:
      return raw === undefined || raw === null || raw === '' ? false : raw;
  }
}

function fieldNames(def: ModelDef, fields: unknown): string[] {
  if (fields === undefined || fields === null || fields === false) return Object.keys(def.fields);
  const list = Array.isArray(fields) ? fields : [fields];
  if (list.length === 0) return Object.keys(def.fields);
  return list.map((field) => {
    if (typeof field !== 'string' || def.fields[field] === undefined) {
      throw pyError('ValueError', `Invalid field ${pyRepr(field)} on ${pyRepr(def.name)}`);
    }
    return field;
  });
}

/** `read`: existing ids only (missing ones are silently skipped, captures), `id` first. */
export function readRecords(
  env: Env,
  def: ModelDef,
  ids: number[],
  fields: unknown,
  load: unknown,
): JsonObject[] {
  const names = fieldNames(def, fields).filter((name) => name !== 'id');
  checkAccess(env, def, 'read');
  const seen = new Set<number>();
  const result: JsonObject[] = [];
  for (const id of ids) {
    const row = env.db.row(def.name, id);
    if (!row || seen.has(id)) continue;
    seen.add(id);
    const record: JsonObject = { id };
    for (const name of names) {
      const field = def.fields[name];
      if (field) record[name] = readValue(env, def, row, name, field, load);
    }
    result.push(record);
  }
  return result;
}

function assertExisting(env: Env, def: ModelDef, ids: number[]): void {
  const missing = ids.filter((id) => !env.db.row(def.name, id));
  if (missing.length > 0) throw missingError(def.name, missing, env.uid);
}

function convertWrite(def: ModelDef, name: string, value: unknown): unknown {
  const field = def.fields[name];
  if (!field) return value;
  if (field.type === 'many2many' || field.type === 'one2many') {
    if (!Array.isArray(value)) return [];
    const ids: number[] = [];
    for (const item of value) {
      if (typeof item === 'number') ids.push(item);
      else if (Array.isArray(item) && item[0] === 6 && Array.isArray(item[2]))
        ids.splice(0, ids.length, ...toIds(item[2]));
      else if (Array.isArray(item) && item[0] === 4 && typeof item[1] === 'number') ids.push(item[1]);
    }
    return ids;
  }
  if (field.type === 'many2one') return typeof value === 'number' ? value : false;
  if (value === null || value === undefined) return false;
  return value;
}

function applyValues(def: ModelDef, row: Row, values: JsonObject, strict: boolean): void {
  for (const [name, value] of Object.entries(values)) {
    const field = def.fields[name];
    if (!field) {
      // create() only logs unknown fields; write() refuses them.
      if (strict) throw pyError('ValueError', `Invalid field ${pyRepr(name)} on model ${pyRepr(def.name)}`);
      continue;
    }
    if (field.computed || name === 'id' || name === 'create_date' || name === 'write_date') continue;
    if (field.type === 'one2many') continue;
    row[name] = convertWrite(def, name, value);
  }
  if (def.name === 'ir.attachment' && typeof row.datas === 'string') {
    const content = Buffer.from(row.datas, 'base64');
    row.file_size = content.length;
    row.checksum = createHash('sha1').update(content).digest('hex');
    if (typeof row.mimetype !== 'string') row.mimetype = 'application/octet-stream';
  }
  row.write_date = utcNow();
}

function createOne(env: Env, def: ModelDef, values: unknown): number {
  if (!isPlainObject(values)) {
    throw pyError(
      'TypeError',
      `BaseModel.create() argument must be a dict or a list of dicts, not ${pyRepr(values)}`,
    );
  }
  const row: Row = { ...(def.defaults?.(env.db) ?? {}) };
  applyValues(def, row, values, false);
  // The checks below are database constraints in Odoo: the INSERT has already taken its id.
  const id = env.db.reserveId(def.name);
  def.validateCreate?.(row, env.db);
  for (const [name, field] of Object.entries(def.fields)) {
    if (field.required && (row[name] === undefined || row[name] === false || row[name] === '')) {
      throw validationError(
        `The operation cannot be completed: Missing required value for the field '${field.string}' (${name})`,
      );
    }
  }
  const now = utcNow();
  row.create_date = now;
  row.write_date = now;
  return env.db.insert(def.name, { ...row, id });
}

/** Fields `copy()` leaves out: the id, the log-access dates, computed and one2many fields. */
function copiedFields(def: ModelDef): string[] {
  return Object.entries(def.fields)
    .filter(
      ([name, field]) =>
        field.computed === undefined &&
        field.type !== 'one2many' &&
        !['id', 'create_date', 'write_date'].includes(name),
    )
    .map(([name]) => name);
}

/** `copy(default)` of one existing record: its stored values, the model's copy overrides, then `default`. */
function copyOne(env: Env, def: ModelDef, id: number, overrides: JsonObject): number {
  const source = env.db.row(def.name, id);
  if (!source) throw missingError(def.name, [id], env.uid);
  const values: JsonObject = {};
  for (const name of copiedFields(def)) values[name] = source[name];
  return createOne(env, def, { ...values, ...(def.copyDefaults?.(source) ?? {}), ...overrides });
}

/** Every `fields_get` attribute of a field, keys sorted (as Odoo's `fields_get()` without `attributes`). */
export function fieldAttributes(name: string, field: FieldDef): JsonObject {
  const stored = field.computed === undefined && field.type !== 'one2many';
  const attributes: JsonObject = {
    change_default: false,
    company_dependent: false,
    default_export_compatible:
      field.type !== 'many2one' && field.type !== 'one2many' && field.type !== 'many2many',
    depends: [],
    exportable: true,
    groupable: stored,
    manual: false,
    name,
    readonly: field.readonly === true,
    required: field.required === true,
    searchable: true,
    sortable: stored,
    store: stored,
    string: field.string,
    type: field.type,
  };
  if (field.relation) {
    attributes.relation = field.relation;
    attributes.context = {};
    attributes.domain = [];
  }
  if (field.related) attributes.related = field.related;
  if (field.type === 'many2one') attributes.allow_hierachy_operators = false;
  if (field.type === 'one2many' && field.inverse) attributes.relation_field = field.inverse;
  if (field.selection) attributes.selection = field.selection.map(([value, label]) => [value, label]);
  if (field.type === 'char' || field.type === 'text' || field.type === 'html') attributes.translate = false;
  if (field.type === 'char') attributes.trim = true;
  return Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function fieldsGet(def: ModelDef, allfields: unknown, attributes: unknown): JsonObject {
  const wanted = Array.isArray(allfields) && allfields.length > 0 ? new Set(allfields) : undefined;
  const keep = Array.isArray(attributes) ? new Set(attributes) : undefined;
  const result: JsonObject = {};
  for (const [name, field] of Object.entries(def.fields)) {
    if (wanted && !wanted.has(name)) continue;
    const full = fieldAttributes(name, field);
    result[name] = keep ? Object.fromEntries(Object.entries(full).filter(([key]) => keep.has(key))) : full;
  }
  return result;
}

function webRead(env: Env, def: ModelDef, ids: number[], specification: unknown): JsonObject[] {
  const spec = isPlainObject(specification) ? specification : {};
  const names = Object.keys(spec);
  const records = readRecords(env, def, ids, names.length > 0 ? names : ['display_name'], '_classic_write');
  return records.map((record) => {
    for (const name of names) {
      const field = def.fields[name];
      const sub = spec[name];
      const value = record[name];
      if (field?.type === 'many2one' && field.relation && typeof value === 'number') {
        const subFields = isPlainObject(sub) && isPlainObject(sub.fields) ? sub.fields : undefined;
        if (subFields) {
          const relationDef = env.db.model(field.relation);
          const [related] = relationDef ? webRead(env, relationDef, [value], subFields) : [];
          record[name] = related ?? { id: value };
        }
      }
    }
    return record;
  });
}

/** The public methods of every model (Odoo 19 signatures). */
export const METHODS: Readonly<Record<string, MethodSpec>> = {
  search: {
    model: true,
    readonly: true,
    params: [param('domain', true), param('offset'), param('limit'), param('order')],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      return searchIds(env, def, args.domain, args);
    },
  },
  search_count: {
    model: true,
    readonly: true,
    params: [param('domain', true), param('limit')],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      return searchIds(env, def, args.domain, { limit: args.limit }).length;
    },
  },
  search_read: {
    model: true,
    readonly: true,
    params: [param('domain'), param('fields'), param('offset'), param('limit'), param('order')],
    varKeyword: 'read_kwargs',
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      const ids = searchIds(env, def, args.domain ?? [], args);
      const readKwargs = isPlainObject(args.read_kwargs) ? args.read_kwargs : {};
      const unexpected = Object.keys(readKwargs).find((key) => key !== 'load');
      // search_read(**read_kwargs) binds anything; _read_format() then refuses it (500 on JSON-2, capture).
      if (unexpected) {
        throw pyError(
          'TypeError',
          `BaseModel._read_format() got an unexpected keyword argument '${unexpected}'`,
        );
      }
      return readRecords(env, def, ids, args.fields, readKwargs.load);
    },
  },
  read: {
    model: false,
    readonly: true,
    params: [param('fields'), param('load')],
    run: (env, def, ids, args) => readRecords(env, def, ids, args.fields, args.load),
  },
  fields_get: {
    model: true,
    params: [param('allfields'), param('attributes')],
    run: (_env, def, _ids, args) => fieldsGet(def, args.allfields, args.attributes),
  },
  create: {
    model: true,
    params: [param('vals_list', true)],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'create');
      const valsList = args.vals_list;
      // Always the new records' ids; JSON-RPC's call_kw turns them into a bare id when its
      // args[0] was a dict (see jsonrpc.ts), JSON-2 never does.
      const list = Array.isArray(valsList) ? valsList : [valsList];
      return list.map((values) => createOne(env, def, values));
    },
  },
  copy: {
    model: false,
    params: [param('default')],
    run: (env, def, ids, args) => {
      checkAccess(env, def, 'create');
      const overrides = isPlainObject(args.default) ? args.default : {};
      // Up to 17, copy() was `ensure_one()` + `@api.returns('self', lambda value: value.id)`: one
      // record in, a bare id out. It works on many records since saas-17.2 (assumed for 18).
      if (Number(env.mode) < 18) {
        if (ids.length !== 1)
          throw pyError('ValueError', `Expected singleton: ${def.name}(${ids.join(', ')})`);
        return copyOne(env, def, ids[0] ?? 0, overrides);
      }
      // 19: a recordset result, the new ids as a list both ways (capture bridge-copy-*).
      return ids.map((id) => copyOne(env, def, id, overrides));
    },
  },
  write: {
    model: false,
    params: [param('vals', true)],
    run: (env, def, ids, args) => {
      checkAccess(env, def, 'write');
      assertExisting(env, def, ids);
      const values = isPlainObject(args.vals) ? args.vals : {};
      for (const id of ids) {
        const row = env.db.row(def.name, id);
        if (row) applyValues(def, row, values, true);
      }
      return true;
    },
  },
  unlink: {
    model: false,
    params: [],
    run: (env, def, ids) => {
      checkAccess(env, def, 'unlink');
      assertExisting(env, def, ids);
      for (const id of ids) env.db.delete(def.name, id);
      return true;
    },
  },
  action_archive: {
    model: false,
    params: [],
    run: (env, def, ids) => setActive(env, def, ids, false),
  },
  action_unarchive: {
    model: false,
    params: [],
    run: (env, def, ids) => setActive(env, def, ids, true),
  },
  // Deprecated since 18.1 (odoo/odoo#183691), so absent from /doc-bearer; gone on 20+ (methodOf).
  toggle_active: {
    model: false,
    params: [],
    run: (env, def, ids) => {
      const active = ids.filter((id) => env.db.row(def.name, id)?.active !== false);
      setActive(env, def, active, false);
      setActive(
        env,
        def,
        ids.filter((id) => !active.includes(id)),
        true,
      );
      // Odoo's toggle_active returns None (odoo/models.py, 17.0: two assignments).
      return undefined;
    },
  },
  name_search: {
    model: true,
    readonly: true,
    params: [param('name'), param('domain'), param('operator'), param('limit')],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      const name = typeof args.name === 'string' ? args.name : '';
      const operator = typeof args.operator === 'string' ? args.operator : 'ilike';
      const limit = optionalNumber(args.limit === undefined ? 100 : args.limit, 'limit');
      const nameFilter = parseDomain([['display_name', operator, name]]);
      validateDomain(nameFilter, env.db, def.name, domainWording(env.mode));
      const ids = searchIds(env, def, args.domain ?? []).filter((id) => {
        const row = env.db.row(def.name, id);
        return row !== undefined && (name === '' || matchesDomain(nameFilter, env.db, def.name, row));
      });
      return ids.slice(0, limit).map((id) => [id, env.db.displayName(def.name, id)]);
    },
  },
  web_search_read: {
    model: true,
    readonly: true,
    params: [
      param('domain', true),
      param('specification', true),
      param('offset'),
      param('limit'),
      param('order'),
      param('count_limit'),
    ],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      const ids = searchIds(env, def, args.domain, args);
      const length =
        args.limit === undefined || args.limit === null
          ? ids.length
          : searchIds(env, def, args.domain).length;
      return { length, records: webRead(env, def, ids, args.specification) };
    },
  },
  web_read: {
    model: false,
    readonly: true,
    params: [param('specification', true)],
    run: (env, def, ids, args) => webRead(env, def, ids, args.specification),
  },
  // ERP 19's grouping (web_read_group's base); absent before 19.
  formatted_read_group: {
    model: true,
    readonly: true,
    params: [
      param('domain', true),
      param('groupby'),
      param('aggregates'),
      param('having'),
      param('offset'),
      param('limit'),
      param('order'),
    ],
    run: (env, def, _ids, args) => {
      if (Number(env.mode) < 19) {
        throw pyError('AttributeError', `The method '${def.name}.formatted_read_group' does not exist`);
      }
      checkAccess(env, def, 'read');
      const matching = searchIds(env, def, args.domain, { order: 'id' });
      return formattedReadGroup(env.db, def, matching, args);
    },
  },
  // @api.deprecated, so absent from /doc-bearer, yet callable both ways (bridge-read_group-undocumented-*).
  read_group: {
    model: true,
    readonly: true,
    params: [
      param('domain', true),
      param('fields', true),
      param('groupby', true),
      param('offset'),
      param('limit'),
      param('orderby'),
      param('lazy'),
    ],
    run: (env, def, _ids, args) => {
      checkAccess(env, def, 'read');
      const matching = searchIds(env, def, args.domain, { order: 'id' });
      return readGroup(env.db, def, matching, args);
    },
  },
};

/**
 * Parameters that 18.0 renamed, by method: their names up to 17.0 (16 and 17 call name_search's
 * domain `args`: captures o17-/o16-v1-named-name_search-args, -err-named-name_search-domain).
 */
const NAMES_BEFORE_18: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  name_search: { domain: 'args' },
};

/**
 * `with_context` up to 17.0: a public method (18 made it `@api.private`), so `execute_kw` calls
 * it on the given ids and answers the new recordset as the JSON encoder's `str()` of it,
 * `res.partner()` or `res.partner(14,)` (captures o17-/o16-v1-with_context).
 */
const WITH_CONTEXT_BEFORE_18: MethodSpec = {
  model: false,
  readonly: true,
  params: [param('context_dict')],
  varKeyword: 'overrides',
  run: (_env, def, ids) => `${def.name}(${ids.length === 1 ? `${ids[0]},` : ids.join(', ')})`,
};

/**
 * `read_group` on 20+ (odoo/odoo#236332, label 19.5; versions.ts): `@api.model`, an adapter of
 * `_read_group` answering one list per group (the groupby values, then the aggregates), the old
 * API (`fields`, `orderby`, `lazy`) gone (odoo/odoo#226523).
 */
const READ_GROUP_20: MethodSpec = {
  model: true,
  readonly: true,
  // formatted_read_group's parameters (both follow `_read_group`'s).
  params: METHODS.formatted_read_group?.params ?? [],
  run: (env, def, _ids, args) => {
    checkAccess(env, def, 'read');
    const matching = searchIds(env, def, args.domain, { order: 'id' });
    return readGroupTuples(env.db, def, matching, args);
  },
};

/** The public method `method` of every model as Odoo `mode` has it ({@link METHODS} for 18 and 19), or undefined. */
export function methodOf(method: string, mode: ErpMode): MethodSpec | undefined {
  const spec = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (isTwentyOrLater(mode)) {
    if (method === 'read_group') return READ_GROUP_20;
    if (method === 'toggle_active') return undefined;
    return spec;
  }
  if (Number(mode) >= 18) return spec;
  if (method === 'with_context') return WITH_CONTEXT_BEFORE_18;
  const renamed = NAMES_BEFORE_18[method];
  if (spec === undefined || renamed === undefined) return spec;
  const current = new Map(Object.entries(renamed).map(([name, before]) => [before, name]));
  return {
    ...spec,
    params: spec.params.map((p) => ({ ...p, name: renamed[p.name] ?? p.name })),
    run: (env, def, ids, args) =>
      spec.run(
        env,
        def,
        ids,
        Object.fromEntries(Object.entries(args).map(([name, value]) => [current.get(name) ?? name, value])),
      ),
  };
}

function setActive(env: Env, def: ModelDef, ids: number[], active: boolean): undefined {
  checkAccess(env, def, 'write');
  assertExisting(env, def, ids);
  if (!def.fields.active) throw pyError('ValueError', `${pyRepr(def.name)} has no 'active' field`);
  for (const id of ids) {
    const row = env.db.row(def.name, id);
    if (row) {
      row.active = active;
      row.write_date = utcNow();
    }
  }
  return undefined;
}

/**
 * Binds JSON-RPC `args`/`kwargs` to a method's parameters the way a Python call
 * `method(recs, *args, **kwargs)` would, raising the same TypeErrors.
 */
export function bindPositional(
  method: string,
  spec: MethodSpec,
  positional: unknown[],
  kwargs: JsonObject,
  mode: ErpMode,
): JsonObject {
  // Python 3.9 (the real 16's) names the function alone (capture o16-v1-err-bad-kwarg).
  const label = platformOf(mode).qualifiedCallErrors ? `BaseModel.${method}()` : `${method}()`;
  const bound: JsonObject = {};
  const extra: JsonObject = {};
  if (positional.length > spec.params.length) {
    const required = spec.params.filter((p) => p.required).length;
    const given = positional.length + 1;
    const takes =
      required === spec.params.length
        ? `takes ${spec.params.length + 1} positional argument${spec.params.length === 0 ? '' : 's'}`
        : `takes from ${required + 1} to ${spec.params.length + 1} positional arguments`;
    throw pyError('TypeError', `${label} ${takes} but ${given} were given`);
  }
  positional.forEach((value, index) => {
    const p = spec.params[index];
    if (p) bound[p.name] = value;
  });
  for (const [key, value] of Object.entries(kwargs)) {
    if (spec.params.some((p) => p.name === key)) {
      if (key in bound) throw pyError('TypeError', `${label} got multiple values for argument '${key}'`);
      bound[key] = value;
    } else if (spec.varKeyword) extra[key] = value;
    else throw pyError('TypeError', `${label} got an unexpected keyword argument '${key}'`);
  }
  const missing = spec.params.filter((p) => p.required && !(p.name in bound)).map((p) => p.name);
  if (missing.length > 0) {
    const s = missing.length === 1 ? '' : 's';
    throw pyError(
      'TypeError',
      `${label} missing ${missing.length} required positional argument${s}: ${pyNameList(missing)}`,
    );
  }
  if (spec.varKeyword) bound[spec.varKeyword] = extra;
  return bound;
}

/** Binds JSON-2 named parameters (`inspect.signature(func).bind(records, **kwargs)`); returns a TypeError text or the binding. */
export function bindNamed(spec: MethodSpec, kwargs: JsonObject): { error: string } | { args: JsonObject } {
  const bound: JsonObject = {};
  const extra: JsonObject = {};
  for (const [key, value] of Object.entries(kwargs)) {
    if (spec.params.some((p) => p.name === key)) bound[key] = value;
    else if (spec.varKeyword) extra[key] = value;
    else return { error: `got an unexpected keyword argument '${key}'` };
  }
  const missing = spec.params.find((p) => p.required && !(p.name in bound));
  if (missing) return { error: `missing a required argument: '${missing.name}'` };
  if (spec.varKeyword) bound[spec.varKeyword] = extra;
  return { args: bound };
}

/** Normalizes `ids` (a list, or a scalar id as in capture `v2-ids-scalar.json`). */
export function normalizeIds(value: unknown): number[] {
  return toIds(value);
}
