/**
 * @module platform/canonical-json
 * RFC 8785 canonical JSON of a plain JSON value (parsed with `JSON.parse`, or built of plain
 * objects, arrays, strings, finite numbers, booleans and null): one text per value, whatever order
 * its members were written in. A key policy's digest and the audit's chain hash it. (Text whose
 * number spellings must be kept is canonicalized from the text: platform/json.ts `canonicalJson`.)
 */

/**
 * The canonical JSON of `value`: members sorted by their UTF-16 code units (a member whose value is
 * `undefined` left out), no whitespace, strings and numbers as ECMAScript serializes them. Throws
 * on a value JSON cannot hold.
 *
 * @example
 * canonicalJsonOf({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJsonOf(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonical JSON holds finite numbers only');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJsonOf).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJsonOf(member)}`).join(',')}}`;
  }
  throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
}
