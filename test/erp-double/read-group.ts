/**
 * @module erp-double/read-group
 * `read_group(domain, fields, groupby, offset=0, limit=None, orderby=False, lazy=True)`: deprecated
 * in Odoo 19 (so absent from `/doc-bearer`) but still callable over both protocols
 * (captures bridge-read_group-undocumented-*). Grouping by plain stored fields only; ordered by
 * grouped fields, `__count` (17+) or an aggregate's key (`alias:count(id)`: ERP 16-18, live);
 * date granularities, x2many groups and other orders are not imitated and say so. On 20+ the
 * name belongs to the new `read_group(domain, groupby, aggregates, having, offset, limit, order)`
 * answering tuples ({@link readGroupTuples}; versions.ts), and this one is gone.
 */
import type { Database, Row } from './database.ts';
import { pyError } from './errors.ts';
import type { ModelDef } from './models.ts';
import { type JsonObject, pyRepr } from './py.ts';

const AGGREGATES: ReadonlySet<string> = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'count_distinct',
  'bool_and',
  'bool_or',
  'array_agg',
]);

/** One aggregate of the `fields` argument: `name`, `name:agg` or `alias:agg(name)`. */
interface Aggregate {
  key: string;
  field: string;
  func: string;
}

/** A limitation of the double, not an Odoo error: surfaces as an "erp-double internal error". */
function notImitated(what: string): Error {
  return new Error(`read_group ${what} is not imitated`);
}

function invalidField(def: ModelDef, name: string): Error {
  return pyError('ValueError', `Invalid field ${pyRepr(name)} on model ${pyRepr(def.name)}`);
}

function groupbyFields(def: ModelDef, groupby: unknown): string[] {
  const specs = typeof groupby === 'string' ? [groupby] : Array.isArray(groupby) ? groupby : [];
  return specs.map((spec) => {
    if (typeof spec !== 'string') throw invalidField(def, String(spec));
    const [name = '', granularity] = spec.split(':');
    const field = def.fields[name];
    if (!field || field.computed) throw invalidField(def, name);
    if (granularity !== undefined || field.type === 'date' || field.type === 'datetime')
      throw notImitated(`by date (${spec})`);
    if (field.type === 'one2many' || field.type === 'many2many' || field.type === 'binary')
      throw notImitated(`by a ${field.type} field (${spec})`);
    return name;
  });
}

function aggregates(def: ModelDef, fields: unknown, grouped: readonly string[]): Aggregate[] {
  const specs = Array.isArray(fields) ? fields : [];
  const result: Aggregate[] = [];
  for (const spec of specs) {
    const match = typeof spec === 'string' ? /^(\w+)(?::(\w+)(?:\((\w+)\))?)?$/.exec(spec.trim()) : null;
    if (!match) throw pyError('ValueError', `Invalid field specification ${pyRepr(spec)}.`);
    const [, first = '', func, inner] = match;
    const field = inner ?? first;
    const fieldDef = def.fields[field];
    if (!fieldDef) throw invalidField(def, field);
    if (func !== undefined) {
      if (!AGGREGATES.has(func)) throw pyError('ValueError', `Invalid aggregation function ${pyRepr(func)}.`);
      result.push({ key: first, field, func });
      continue;
    }
    // A bare name aggregates with the field's default aggregator: sum for numbers, none otherwise
    // (the grouped fields themselves and `id` are skipped).
    if (grouped.includes(field) || field === 'id') continue;
    if (fieldDef.type === 'integer' || fieldDef.type === 'float')
      result.push({ key: field, field, func: 'sum' });
  }
  return result;
}

function aggregate(values: readonly unknown[], func: string): unknown {
  const present = values.filter((value) => value !== false && value !== null && value !== undefined);
  const numbers = present.filter((value): value is number => typeof value === 'number');
  switch (func) {
    case 'count':
      return present.length;
    case 'count_distinct':
      return new Set(present.map((value) => JSON.stringify(value))).size;
    case 'sum':
      return numbers.reduce((total, value) => total + value, 0);
    case 'avg':
      return numbers.length === 0
        ? false
        : numbers.reduce((total, value) => total + value, 0) / numbers.length;
    case 'min':
      return numbers.length === 0 ? false : Math.min(...numbers);
    case 'max':
      return numbers.length === 0 ? false : Math.max(...numbers);
    case 'bool_and':
      return present.every((value) => value === true);
    case 'bool_or':
      return present.some((value) => value === true);
    default:
      return present;
  }
}

/** `normalize_domain`: the implicit ANDs of a list domain made explicit. */
function normalizeDomain(domain: readonly unknown[]): unknown[] {
  const result: unknown[] = [];
  let expected = 1;
  for (const token of domain) {
    if (expected === 0) {
      result.unshift('&');
      expected = 1;
    }
    if (Array.isArray(token)) expected -= 1;
    else expected += token === '!' ? 0 : token === '&' || token === '|' ? 1 : -1;
    result.push(token);
  }
  return result;
}

/** `Domain.AND(domains)` as a list: empty domains drop out, one `&` per extra operand (capture shape). */
function andDomains(domains: readonly (readonly unknown[])[]): unknown[] {
  const parts = domains.filter((domain) => domain.length > 0).map(normalizeDomain);
  return [...Array<string>(Math.max(parts.length - 1, 0)).fill('&'), ...parts.flat()];
}

/** The group value as `read_group` prints it: many2one as `[id, display_name]`, empty as false. */
function groupValue(db: Database, def: ModelDef, field: string, raw: unknown): unknown {
  const fieldDef = def.fields[field];
  if (fieldDef?.type === 'many2one') {
    return typeof raw === 'number' ? [raw, db.displayName(fieldDef.relation ?? '', raw)] : false;
  }
  if (fieldDef?.type === 'boolean') return raw === true;
  return raw === undefined || raw === null || raw === '' ? false : raw;
}

/** Sort key of a group value: many2one groups follow the comodel's name, empty groups come last. */
function sortKey(db: Database, def: ModelDef, field: string, raw: unknown): string | number | null {
  const fieldDef = def.fields[field];
  if (fieldDef?.type === 'many2one')
    return typeof raw === 'number' ? db.displayName(fieldDef.relation ?? '', raw) : null;
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  return typeof raw === 'number' || typeof raw === 'string' ? raw : null;
}

function compare(left: string | number | null, right: string | number | null): number {
  if (left === null || right === null) return left === right ? 0 : left === null ? 1 : -1;
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  return String(left).localeCompare(String(right), 'en');
}

interface Group {
  raws: unknown[];
  rows: Row[];
}

interface OrderTerm {
  /** A grouped field's index, the count, or an aggregate's key. */
  index: number | 'count' | { readonly aggregate: string };
  descending: boolean;
}

function orderTerms(
  orderby: unknown,
  fields: readonly string[],
  countKey: string,
  aggregateKeys: readonly string[],
): OrderTerm[] {
  if (orderby === undefined || orderby === null || orderby === false || orderby === '')
    return fields.map((_, index) => ({ index, descending: false }));
  if (typeof orderby !== 'string') throw notImitated(`with orderby ${pyRepr(orderby)}`);
  return orderby.split(',').map((part) => {
    const [name = '', direction = 'asc'] = part.trim().split(/\s+/);
    const index =
      name === '__count' || name === countKey
        ? 'count'
        : aggregateKeys.includes(name) && !fields.includes(name)
          ? { aggregate: name }
          : fields.indexOf(name);
    if (index === -1 || !/^(asc|desc)$/i.test(direction))
      throw notImitated(`with orderby ${pyRepr(orderby)}`);
    return { index, descending: direction.toLowerCase() === 'desc' };
  });
}

/**
 * Groups `ids` (the records matching `args.domain`, archived ones already left out) like
 * `read_group`. Lazy (the default) groups by the first groupby only, counts in `<field>_count` and
 * passes the other groupbys in `__context`; non-lazy groups by all and counts in `__count`.
 */
export function readGroup(
  db: Database,
  def: ModelDef,
  ids: readonly number[],
  args: JsonObject,
): JsonObject[] {
  const allGroupby = groupbyFields(def, args.groupby);
  const lazy = args.lazy !== false;
  const grouped = lazy ? allGroupby.slice(0, 1) : allGroupby;
  const countKey = lazy && grouped[0] !== undefined ? `${grouped[0]}_count` : '__count';
  const specs = aggregates(def, args.fields, allGroupby);
  const domain = Array.isArray(args.domain) ? args.domain : [];

  const groups = new Map<string, Group>();
  for (const id of ids) {
    const row = db.row(def.name, id);
    if (!row) continue;
    const raws = grouped.map((field) => db.fieldValue(def.name, row, field) ?? false);
    const key = JSON.stringify(raws);
    const group = groups.get(key) ?? { raws, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }

  const terms = orderTerms(
    args.orderby,
    grouped,
    countKey,
    specs.map((spec) => spec.key),
  );
  const aggregateOf = (group: Group, key: string): string | number | null => {
    const spec = specs.find((candidate) => candidate.key === key);
    const value = spec
      ? aggregate(
          group.rows.map((row) => db.fieldValue(def.name, row, spec.field)),
          spec.func,
        )
      : null;
    return typeof value === 'number' || typeof value === 'string' ? value : null;
  };
  const sorted = [...groups.values()].sort((a, b) => {
    for (const term of terms) {
      const { index } = term;
      const result =
        index === 'count'
          ? a.rows.length - b.rows.length
          : typeof index === 'object'
            ? compare(aggregateOf(a, index.aggregate), aggregateOf(b, index.aggregate))
            : compare(
                sortKey(db, def, grouped[index] ?? '', a.raws[index]),
                sortKey(db, def, grouped[index] ?? '', b.raws[index]),
              );
      if (result !== 0) return term.descending ? -result : result;
    }
    return 0;
  });
  const offset = typeof args.offset === 'number' ? args.offset : 0;
  const limit = typeof args.limit === 'number' ? args.limit : undefined;
  const page = sorted.slice(offset, limit === undefined ? undefined : offset + limit);

  return page.map((group) => {
    const result: JsonObject = {};
    grouped.forEach((field, index) => {
      result[field] = groupValue(db, def, field, group.raws[index]);
    });
    for (const spec of specs) {
      result[spec.key] = aggregate(
        group.rows.map((row) => db.fieldValue(def.name, row, spec.field)),
        spec.func,
      );
    }
    result[countKey] = group.rows.length;
    const conditions = grouped.map((field, index) => [field, '=', group.raws[index]]);
    result.__domain = andDomains([domain, ...conditions.map((condition) => [condition])]);
    if (lazy && allGroupby.length > 1) result.__context = { group_by: allGroupby.slice(1) };
    return result;
  });
}

/**
 * `formatted_read_group(domain, groupby=(), aggregates=(), having=(), offset=0, limit=None,
 * order=None)`, ERP 19's grouping method (absent before): the groups of `read_group` (not lazy)
 * with the aggregates named as asked (`field:agg`), `__count` only when asked for, and the
 * group's own conditions as `__extra_domain`. `having` is not imitated.
 */
export function formattedReadGroup(
  db: Database,
  def: ModelDef,
  ids: readonly number[],
  args: JsonObject,
): JsonObject[] {
  const having = Array.isArray(args.having) ? args.having : [];
  if (having.length > 0) throw notImitated('formatted_read_group with having');
  const asked = Array.isArray(args.aggregates) ? args.aggregates : [];
  const specs = asked.filter((spec): spec is string => typeof spec === 'string' && spec !== '__count');
  const alias = (index: number): string => `formatted_${index}`;
  const fields = specs.map((spec, index) => {
    const [field = '', func = ''] = spec.split(':');
    if (func === '') throw pyError('ValueError', `Invalid aggregate specification ${pyRepr(spec)}`);
    return `${alias(index)}:${func}(${field})`;
  });
  const order =
    typeof args.order === 'string'
      ? args.order
          .split(',')
          .map((term) => {
            const [name = '', direction] = term.trim().split(/\s+/);
            const index = specs.indexOf(name);
            const key = index >= 0 ? alias(index) : name;
            return direction === undefined ? key : `${key} ${direction}`;
          })
          .join(', ')
      : undefined;
  const rows = readGroup(db, def, ids, {
    domain: [],
    fields,
    groupby: args.groupby ?? [],
    offset: args.offset ?? 0,
    ...(args.limit === undefined || args.limit === null ? {} : { limit: args.limit }),
    ...(order === undefined ? {} : { orderby: order }),
    lazy: false,
  });
  const groupby = Array.isArray(args.groupby) ? (args.groupby as string[]) : [];
  return rows.map((row) => {
    const result: JsonObject = {};
    for (const name of groupby) result[name] = row[name];
    result.__extra_domain = row.__domain;
    if (asked.includes('__count')) result.__count = row.__count;
    specs.forEach((spec, index) => {
      result[spec] = row[alias(index)];
    });
    return result;
  });
}

const GRANULARITIES: ReadonlySet<string> = new Set(['day', 'week', 'month', 'quarter', 'year']);

/** The checks of `_read_group`'s specs that a 16-19 call sent to the 20 form trips (versions.ts). */
function checkTupleSpecs(
  def: ModelDef,
  groupby: readonly unknown[],
  aggregateSpecs: readonly unknown[],
): void {
  for (const spec of groupby) {
    if (typeof spec !== 'string') throw invalidField(def, String(spec));
    const [name = '', granularity] = spec.split(':');
    const field = def.fields[name];
    if (!field) throw invalidField(def, name);
    if (
      granularity !== undefined &&
      ((field.type !== 'date' && field.type !== 'datetime') || !GRANULARITIES.has(granularity))
    )
      throw pyError('ValueError', `Granularity set on a no-datetime field or property: ${pyRepr(spec)}`);
  }
  for (const spec of aggregateSpecs) {
    if (spec === '__count') continue;
    if (typeof spec !== 'string') throw invalidField(def, String(spec));
    const [name = '', func] = spec.split(':');
    if (!def.fields[name]) throw invalidField(def, name);
    if (func === undefined) throw pyError('ValueError', `Aggregate method is mandatory for ${pyRepr(name)}`);
    if (!AGGREGATES.has(func))
      throw pyError('ValueError', `Invalid aggregate method ${pyRepr(func)} for ${pyRepr(spec)}.`);
  }
}

/**
 * `read_group(domain, groupby=(), aggregates=(), having=(), offset=0, limit=None, order=None)` of
 * ERP 20+ (odoo/odoo#236332; versions.ts): one list per group, the groupby values (a many2one
 * as its id, false when empty) then the aggregates in the order asked (`__count` the records).
 * The groups and their order are `formatted_read_group`'s; `having` is not imitated.
 */
export function readGroupTuples(
  db: Database,
  def: ModelDef,
  ids: readonly number[],
  args: JsonObject,
): unknown[][] {
  const groupby =
    typeof args.groupby === 'string' ? [args.groupby] : Array.isArray(args.groupby) ? args.groupby : [];
  const asked = Array.isArray(args.aggregates) ? args.aggregates : [];
  checkTupleSpecs(def, groupby, asked);
  const withCount = asked.includes('__count') ? asked : [...asked, '__count'];
  const rows = formattedReadGroup(db, def, ids, { ...args, groupby, aggregates: withCount });
  return rows.map((row) => [
    ...groupby.map((spec) => {
      const value = row[String(spec)];
      return Array.isArray(value) ? value[0] : value;
    }),
    ...asked.map((spec) => row[String(spec)] ?? null),
  ]);
}
