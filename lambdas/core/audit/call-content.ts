/**
 * @module core/audit/call-content
 * What a call writes, for its audit record (docs/guide/audit.md, "What a record holds"): the ids it
 * names, the field names it writes and an HMAC of everything it sends besides its ids, read from
 * its ERP request as the gate's policy step ruled it (execute's one request; an MCP tool's declared
 * ones), per request shape:
 *
 * - ids: the first positional argument of a record method (v1 `write`, `unlink`, a `call_method`
 *   with `args`: what `execute_kw` binds, whatever the named ones say), else `ids` among the named
 *   arguments (v2, JSON-2, the MCP tools), when it is an id or a list of ids;
 * - fields: the keys of the arguments whose role is field values (`write`'s `vals`, `create`'s
 *   `vals_list`: core/policy/call-shapes.ts), and the fields a context's `default_<field>` fills;
 * - values: every argument besides the ids, `context` included (its `default_*` keys are written
 *   too), in canonical JSON (RFC 8785's member order, numbers spelled as the proxy forwards them),
 *   HMAC-SHA-256 under the audit's digest key. Never stored in clear.
 */
import { printable } from '../../platform/bounded-text.ts';
import {
  isLosslessObject,
  JsonNumber,
  type LosslessValue,
  losslessInteger,
  parseLossless,
} from '../../platform/lossless-json.ts';
import type { ErpCall } from '../../upstream/erp-transport.ts';
import { CALL_SHAPES, callArguments } from '../policy/call-shapes.ts';
import { callWrites } from '../policy/call-writes.ts';

/** The content of one request, before its digests. */
export interface CallContent {
  readonly model: string;
  readonly method: string;
  /** The ids it names (every safe integer: the record keeps the first ones and a digest of all). */
  readonly ids: readonly number[] | undefined;
  /** How many ids it names, those past the safe integers included. */
  readonly idsCount: number | undefined;
  /** The field names it writes, in first-seen order. */
  readonly fields: readonly string[];
  /** The canonical JSON of everything it sends besides its ids. */
  readonly valuesText: string;
}

/**
 * The ids of a value that holds ids (an id, or a list of ids), with how many it holds: an integer
 * past JavaScript's safe range is counted, not kept. `undefined`: not ids.
 */
function idsOf(
  value: LosslessValue | undefined,
): { readonly ids: number[]; readonly count: number } | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  const ids: number[] = [];
  for (const item of list) {
    if (!(item instanceof JsonNumber) || !/^-?\d+$/.test(item.text)) return undefined;
    const id = losslessInteger(item);
    if (id !== undefined) ids.push(id);
  }
  return { ids, count: list.length };
}

function parsed(text: string | undefined): LosslessValue | undefined {
  if (text === undefined) return undefined;
  try {
    return parseLossless(text);
  } catch {
    return undefined;
  }
}

/** Longest field name a record keeps (longer ones are cut); controls and format characters are removed. */
export const MAX_FIELD_NAME = 100;

/** A field name as a record keeps it (see {@link MAX_FIELD_NAME}). */
function shownField(name: string): string {
  return printable(name, MAX_FIELD_NAME) ?? '?';
}

/** The field names of a values argument: one record's values, or a list of them. */
function fieldNames(value: LosslessValue, into: Set<string>): void {
  if (isLosslessObject(value)) {
    for (const name of Object.keys(value)) into.add(shownField(name));
  } else if (Array.isArray(value))
    for (const item of value) if (isLosslessObject(item)) fieldNames(item, into);
}

/**
 * The canonical JSON of a value read losslessly, in one pass: each object's members sorted by name
 * (UTF-16 code units, RFC 8785's order; a repeated name was already the last one), strings as
 * `JSON.stringify` writes them, numbers exactly as the caller spelled them (platform/json.ts
 * `canonicalJson` gives the same text from JSON text).
 */
export function canonicalText(value: LosslessValue): string {
  if (value === null) return 'null';
  if (value instanceof JsonNumber) return value.text;
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`;
  const names = Object.keys(value).sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalText(value[name] as LosslessValue)}`).join(',')}}`;
}

/** The content of `call` (see the module header). */
export function callContent(call: ErpCall): CallContent {
  const args = parsed(call.argsJson);
  const positional = Array.isArray(args) ? args : undefined;
  const kwargsValue = parsed(call.kwargsJson);
  const kwargs = isLosslessObject(kwargsValue) ? kwargsValue : {};
  const shape = CALL_SHAPES.get(call.method);
  // A positional call (v1's execute_kw) binds its records from its first argument, whatever its
  // named ones say; a named one (JSON-2) from `ids`.
  let found: ReturnType<typeof idsOf>;
  let rest = positional ?? [];
  let named = kwargs;
  if (positional !== undefined && (shape?.record ?? true)) {
    found = idsOf(positional[0]);
    if (found !== undefined) rest = positional.slice(1);
  } else {
    found = idsOf(kwargs.ids);
    if (found !== undefined) {
      const { ids: _ids, ...others } = kwargs;
      named = others;
    }
  }
  const fields = new Set<string>();
  if (shape !== undefined) {
    for (const argument of callArguments(shape, positional, kwargs)) {
      if (argument.role === 'values' || argument.role === 'values_list') fieldNames(argument.value, fields);
    }
  }
  // A context's `default_<field>` is a value the ERP writes too.
  const context = kwargs.context;
  if (isLosslessObject(context)) {
    for (const name of Object.keys(context)) {
      if (name.startsWith('default_') && name.length > 'default_'.length)
        fields.add(shownField(name.slice(8)));
    }
  }
  return {
    model: call.model,
    method: call.method,
    ids: found?.ids,
    idsCount: found?.count,
    fields: [...fields],
    valuesText: canonicalText({ args: rest, kwargs: named }),
  };
}

/** The request of a call its record describes: the first one that writes, else the first. */
export function auditedRequest(requests: readonly ErpCall[] | undefined): ErpCall | undefined {
  if (requests === undefined || requests.length === 0) return undefined;
  return requests.find((request) => callWrites(request)) ?? requests[0];
}

/** The methods whose answer is the ids of the records they made (a record's `created_ids`). */
export const CREATING_METHODS: ReadonlySet<string> = new Set(['create', 'copy']);

/** The ids a create's result gave (an id, or a list of ids); `undefined` otherwise. */
export function createdIdsOf(result: unknown): number[] | undefined {
  if (typeof result === 'number' && Number.isSafeInteger(result)) return [result];
  if (Array.isArray(result) && result.length > 0 && result.every((id) => Number.isSafeInteger(id))) {
    return result as number[];
  }
  return undefined;
}
