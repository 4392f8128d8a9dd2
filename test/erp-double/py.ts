/**
 * @module erp-double/py
 * Small helpers that print values the way Python (and so Odoo's messages and JSON) does.
 */

/** A JSON-compatible plain object. */
export type JsonObject = Record<string, unknown>;

/** True for a plain (non-array, non-null) object. */
export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python `repr()` of a JSON value: `True`, `None`, `'text'`, `[1, 2]`, `{'a': 1}`. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    if (value.includes("'") && !value.includes('"')) return `"${value}"`;
    return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isPlainObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

/** Python repr of a tuple, e.g. a domain condition `('name', '=', 1)`. */
export function pyTupleRepr(items: readonly unknown[]): string {
  return items.length === 1 ? `(${pyRepr(items[0])},)` : `(${items.map(pyRepr).join(', ')})`;
}

/**
 * `json.dumps(value)` with Python's default separators (`', '` and `': '`), as Odoo's
 * `make_json_response` writes it. Floats that happen to be integral print without `.0` (JS numbers).
 */
export function pyJsonDumps(value: unknown): string {
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`;
  if (isPlainObject(value)) {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJsonDumps(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Python's list formatting of names in TypeErrors: `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`. */
export function pyNameList(names: readonly string[]): string {
  const quoted = names.map((n) => `'${n}'`);
  if (quoted.length <= 1) return quoted.join('');
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}

/** `fields.Datetime.to_string(now)` in UTC: `YYYY-MM-DD HH:MM:SS`. */
export function utcNow(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}
