/**
 * @module upstream/removed-methods
 * v1 calls written for ERP 16-19 that ERP 20 and later no longer take, refused before they are
 * translated to JSON-2 (README, "ERP 20 and 21"): `read_group` in its 16-19 form (the old API was
 * removed in Odoo 19.1, odoo/odoo#226523; the name now belongs to a new method, odoo/odoo#236332)
 * and `toggle_active` (reported removed; deprecated since 18.1, odoo/odoo#183691). Over
 * `/jsonrpc` such calls are never translated, so they pass as written and Odoo answers them.
 */
import { topLevelTexts } from '../platform/json.ts';
import type { ErpCall } from './erp-transport.ts';
import { FIRST_ERP20_MAJOR } from './method-signatures.ts';

/** The names only read_group's 16-19 form takes. */
const OLD_READ_GROUP_NAMES: ReadonlySet<string> = new Set(['fields', 'orderby', 'lazy']);

/**
 * The aggregate functions of `_read_group` (Odoo 17+ `READ_GROUP_AGGREGATE`), which a 20 form's
 * `aggregates` name (`"amount:sum"`) and a groupby never does (its suffixes are granularities).
 */
const AGGREGATE_FUNCTIONS =
  'sum|avg|max|min|count|count_distinct|array_agg|array_agg_distinct|bool_and|bool_or|recordset|sum_currency';
/** An aggregate as the 20 form's `aggregates` holds it. */
const AGGREGATE_SPEC = new RegExp(`^(?:__count|[A-Za-z_][\\w.]*:(?:${AGGREGATE_FUNCTIONS}))$`);
/** An aggregate only the 16-19 form's `fields` takes: `alias:func(field)`. */
const OLD_AGGREGATE = /^\w+:\w+\(\w*\)$/;

function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * Whether positional `params` can only be read_group's 16-19 form `(domain, fields, groupby,
 * offset, limit, orderby, lazy)`, not the 20 form `(domain, groupby, aggregates, having, offset,
 * limit, order)`: an aggregate in the second place (`fields`; a groupby never has one), a third
 * that is a string or holds anything but aggregates (`groupby`), a number in the fourth (`offset`,
 * where 20 takes the `having` domain), a string in the sixth (`orderby`, where 20 takes `limit`),
 * a boolean in the seventh (`lazy`). Positions that fit both forms (`[domain, ["name"], []]`)
 * are the 20 form's: they run as such.
 */
function oldPositionalForm(positional: readonly string[]): boolean {
  const [, second, third, fourth, , sixth, seventh] = positional.map(parsed);
  if (strings(second).some((spec) => AGGREGATE_SPEC.test(spec) || OLD_AGGREGATE.test(spec))) return true;
  if (typeof third === 'string') return true;
  if (Array.isArray(third) && third.some((spec) => typeof spec !== 'string' || !AGGREGATE_SPEC.test(spec)))
    return true;
  return typeof fourth === 'number' || typeof sixth === 'string' || typeof seventh === 'boolean';
}

/** Whether `call` is read_group in its 16-19 form: a name only it takes, or positions only it fits. */
export function isOldReadGroup(call: ErpCall): boolean {
  if (call.method !== 'read_group') return false;
  const keyword = topLevelTexts(call.kwargsJson).members;
  if ([...keyword.keys()].some((name) => OLD_READ_GROUP_NAMES.has(name))) return true;
  return oldPositionalForm(topLevelTexts(call.argsJson ?? '[]').elements);
}

/**
 * Why `call` cannot be sent to an ERP of major `major` over JSON-2 as written, with what to call
 * instead, or `undefined` when it can. The words name v1's `call_method`, which both execute and
 * the MCP tool `call_method` have.
 */
export function removedMethodRefusal(call: ErpCall, major: number | undefined): string | undefined {
  if (major === undefined || major < FIRST_ERP20_MAJOR) return undefined;
  if (call.method === 'toggle_active') {
    return (
      `Invalid request: ${call.model}.toggle_active does not exist on ERP ${major} (removed after Odoo 19, which ` +
      'deprecated it). Call action_archive to archive the records or action_unarchive to restore them, with the same ids. ' +
      'The call was not sent.'
    );
  }
  if (isOldReadGroup(call)) {
    return (
      `Invalid request: ${call.model}.read_group is written in its ERP 16-19 form (domain, fields, groupby, offset, ` +
      `limit, orderby, lazy), which ERP ${major} no longer has: there read_group is read_group(domain, groupby, ` +
      'aggregates, having, offset, limit, order) and answers one list per group. For groups as objects call ' +
      'formatted_read_group(domain, groupby, aggregates, having, offset, limit, order), aggregates written ' +
      '"field:sum" (avg, min, max, count_distinct...) and "__count" for the count, or call read_group in its ' +
      'ERP 20 form through call_method. The call was not sent.'
    );
  }
  return undefined;
}
