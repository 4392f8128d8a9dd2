/**
 * @module core/policy/answer-filter
 * The `fields` rule's answer side: the denied fields of the call's model (its own rule's, denied or
 * not allowed, and those it carries by a related path: core/policy/field-rule.ts) removed from the
 * answers that carry fields (`CALL_SHAPES`' answer shapes: records of `read`, `search_read`, `web_read`,
 * `web_save`; `web_search_read`'s `records`; `fields_get` and `default_get` by field; groups of
 * `read_group` and `formatted_read_group`, keys `field` or `field:aggregate`), also when the caller
 * named no fields. Nested records (a 17+ specification's relations) carry only what the request
 * named, which the request side checked. An answer the ERP sent as bytes is read and written
 * back with every number as the ERP spelt it (platform/lossless-json.ts); an answer with nothing
 * to remove is passed on as it came.
 */
import {
  isLosslessObject,
  type LosslessValue,
  parseLossless,
  stringifyLossless,
} from '../../platform/lossless-json.ts';
import type { ErpOutcome } from '../../upstream/erp-transport.ts';
import type { AnswerShape } from './call-shapes.ts';
import type { FieldTest } from './field-rule.ts';

type Members = { [name: string]: unknown };

function isMembers(value: unknown): value is Members {
  return isLosslessObject(value);
}

/** Removes the members `drop` names from `object`; whether it removed any. */
function dropMembers(object: unknown, drop: (name: string) => boolean): boolean {
  if (!isMembers(object)) return false;
  let removed = false;
  for (const name of Object.keys(object)) {
    if (drop(name)) {
      delete object[name];
      removed = true;
    }
  }
  return removed;
}

function dropFromEach(list: unknown, drop: (name: string) => boolean): boolean {
  if (!Array.isArray(list)) return false;
  let removed = false;
  for (const item of list) removed = dropMembers(item, drop) || removed;
  return removed;
}

/**
 * Whether a group's key names a denied field: `field` and `field:aggregate` name it; Odoo's own keys
 * (`__count`, `__domain`, `__range`...) name none; 16-18's lazy `<groupby>_count` names the field it
 * counts, when that is a field the test knows, else the key itself.
 */
function groupKeyDenied(name: string, denied: FieldTest): boolean {
  if (name.startsWith('__')) return false;
  if (!name.includes(':') && name.endsWith('_count') && denied(name))
    return denied(name.slice(0, -'_count'.length));
  // A group by a path (19's `partner_id.country_id`) is keyed by the path, checked in the request.
  return denied(name.split(/[.:]/)[0] as string);
}

/** Removes the denied fields from an answer value in place; whether it removed any. */
export function removeDeniedFields(value: unknown, shape: AnswerShape, denied: FieldTest): boolean {
  switch (shape) {
    case 'records':
      return dropFromEach(value, denied);
    case 'web_records':
      return isMembers(value) && dropFromEach(value.records, denied);
    case 'by_field':
      return dropMembers(value, denied);
    case 'groups':
      return dropFromEach(value, (name) => groupKeyDenied(name, denied));
    default:
      return false;
  }
}

/**
 * `outcome` without the denied fields of the call's model: a result's value changed in place, a
 * raw result re-written (numbers as spelt) only when something was removed.
 */
export function filterOutcome(outcome: ErpOutcome, shape: AnswerShape, denied: FieldTest): ErpOutcome {
  if (shape === 'none' || outcome.kind === 'erp_error') return outcome;
  if (outcome.kind === 'result') {
    removeDeniedFields(outcome.value, shape, denied);
    return outcome;
  }
  const value: LosslessValue = parseLossless(outcome.json.toString('utf8'));
  if (!removeDeniedFields(value, shape, denied)) return outcome;
  return { kind: 'raw_result', json: Buffer.from(stringifyLossless(value), 'utf8') };
}
