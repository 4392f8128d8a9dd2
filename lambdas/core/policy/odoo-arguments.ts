/**
 * @module core/policy/odoo-arguments
 * One reader per argument kind, written from Odoo's own parsing of it in 16, 17, 18 and 19 (the
 * file and function are named at each reader), so a key policy's rules read a call as Odoo will run
 * it, not as the proxy happens to split it (docs/guide/policies.md, "What each rule reads"). Each
 * reader answers the field paths an argument names (a path: the field names from the call's model,
 * one per relation followed); where Odoo's grammar is looser than a field name, the reader takes at
 * least every field Odoo would read, never less.
 *
 * JavaScript's `\w` is ASCII where Python's is Unicode: a name the reader cuts short at a non-ASCII
 * letter is one Odoo reads as a longer name, which is no field (Odoo refuses the call), so the
 * reader's shorter name can only refuse more, never less.
 */

/** Odoo's count aggregate: names no field (`__count`, in `aggregates`, `having` and `order`). */
const COUNT = '__count';

/**
 * The field paths of one field spec of a `fields`, `groupby` or `aggregates` list, or of an
 * `order` or `having` term: `name`, `name:agg`, `alias:agg(name)` (only `name` is a field: the
 * alias names the answer's member, {@link specAlias}), `date:month`, a dotted path
 * (`partner_id.country_id`, 19's many2one groupby paths; 17+'s `props.property`).
 *
 * Read from: `regex_field_agg` `(\w+)(?::(\w+)(?:\((\w+)\))?)?`, used with `.match` (anchored at the
 * start only: trailing text is ignored) in `read_group` (16 `odoo/models.py` `_read_group_raw`,
 * 17-18 `read_group`, 19 `odoo/orm/models.py` `read_group`); `regex_read_group_spec`
 * `(\w+)(\.(\w+))?(?::(\w+))?$` (17-18) and `(\w+)(\.([\w\.]+))?(?::(\w+))?$` (19) in
 * `parse_read_group_spec`; `_read_group_select` for `field:agg` and `__count` (17-19).
 *
 * @example
 * specFieldPaths('total:sum(amount)') // [['amount']]
 * specFieldPaths('partner_id.email:count_distinct') // [['partner_id', 'email']]
 * specFieldPaths('email!!') // [['email']] (what regex_field_agg.match reads)
 */
export function specFieldPaths(spec: string): string[][] {
  const trimmed = spec.trim();
  if (trimmed === COUNT) return [];
  const inner = innerField(trimmed);
  if (inner !== undefined) return [inner.split('.')];
  const head = /^\w+(?:\.\w+)*/.exec(trimmed)?.[0];
  return head === undefined ? [] : [head.split('.')];
}

/**
 * The field aggregated by `alias:agg(field)`, if the spec has that form as `regex_field_agg` reads
 * it (`(\w+)(?::(\w+)(?:\((\w+)\))?)?`: the alias, an aggregate name, the field in parentheses).
 */
function innerField(spec: string): string | undefined {
  return /^\w+:\w+\((\w+)\)/.exec(spec)?.[1];
}

/**
 * The alias of an `alias:agg(field)` spec (16-19's `read_group` `fields`): the name of the answer's
 * member that holds the aggregate, which is no field of the model.
 *
 * @example
 * specAlias('total:sum(amount)') // 'total'
 * specAlias('amount:sum') // undefined
 */
export function specAlias(spec: string): string | undefined {
  const trimmed = spec.trim();
  return innerField(trimmed) === undefined ? undefined : /^\w+/.exec(trimmed)?.[0];
}

/**
 * The field paths of an `order` string (`name desc, "vat", amount:max desc nulls last`).
 *
 * Read from: `regex_order` (16 `odoo/models.py`: `([a-z0-9:_]+|"[a-z0-9:_]+")(\.id)?` per term, a
 * quoted name included; 17-18 the same with `(\.property)?(:func)?` and `nulls first|last`; 19
 * `odoo/orm/models.py` without the quoted form) and 17-19's `regex_order_part_read_group`
 * (`read_group` and `formatted_read_group` orders by `field:agg` and `__count`, requested or not).
 */
export function orderFieldPaths(order: string): string[][] {
  const paths: string[][] = [];
  for (const term of order.split(',')) {
    let name = term.trim().split(/\s+/)[0] ?? '';
    // 16-18 accept a term in double quotes ("vat"): Odoo reads the name inside.
    if (name.startsWith('"')) name = name.slice(1).replace(/"(?=[.:]|$)/, '');
    if (name !== '') paths.push(...specFieldPaths(name));
  }
  return paths;
}

/**
 * The field path of one `having` leaf's left side: an aggregate spec, `__count` or `field:agg`
 * (19's `formatted_read_group`, `odoo/orm/models.py` `_read_group_having`, each leaf's field read
 * by `_read_group_select`). `[]` for `__count`.
 */
export function havingFieldPaths(left: string): string[][] {
  return specFieldPaths(left);
}

/**
 * An `export_data` column as Odoo splits it: `fix_import_export_id_paths` (16 `odoo/models.py`,
 * 17-18 the same, 19 `odoo/orm/models.py`; identical in all four), unanchored as Odoo's:
 * `x.id` is `x/.id`, `x:id` is `x/id`, and even `a.identifier` is `['a', '.identifier']`.
 *
 * @example
 * exportColumnPath('email.id') // ['email', '.id']
 * exportColumnPath('category_id:id/name') // ['category_id', 'id', 'name']
 */
export function exportColumnPath(column: string): string[] {
  return column
    .replace(/([^/])\.id/g, '$1/.id')
    .replace(/([^/]):id/g, '$1/id')
    .split('/');
}

/**
 * The fields an export column reads, as `_export_rows` follows it (16 `odoo/models.py`, 17-18 the
 * same, 19 `odoo/orm/models.py`): its segments up to the first `id` or `.id` (the record's external
 * or database id: nothing after it is read). A non-relational field exports its value whatever
 * follows it; the caller stops there once it knows the field is not relational.
 */
export function exportFieldPath(column: string): string[] {
  const path = exportColumnPath(column);
  const end = path.findIndex((segment) => segment === 'id' || segment === '.id');
  return end === -1 ? path : path.slice(0, end);
}

/**
 * Whether `export_data` with these columns writes: a column with an `id` segment after Odoo's
 * rewrite makes `_export_rows` give records external ids, which `__ensure_xml_id` creates as
 * `ir.model.data` rows when missing (at the top level when a path ends in `id`; at once for a
 * many2many in `import_compat` mode, the default). `.id` (the database id) never writes. A value
 * that is not a list of strings is read as writing (fail closed).
 */
export function exportWrites(columns: unknown): boolean {
  if (!Array.isArray(columns)) return columns !== undefined;
  return columns.some((column) => typeof column !== 'string' || exportColumnPath(column).includes('id'));
}
