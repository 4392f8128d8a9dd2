/**
 * @module core/policy/answer-filter
 * The `fields` rule's answer side: the denied fields of the call's model removed from the answers
 * that carry fields (`CALL_SHAPES`' answer shapes: records of `read`, `search_read`, `web_read`,
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

/** Removes the denied fields from an answer value in place; whether it removed any. */
export function removeDeniedFields(value: unknown, shape: AnswerShape, denied: ReadonlySet<string>): boolean {
  const isDenied = (name: string): boolean => denied.has(name);
  switch (shape) {
    case 'records':
      return dropFromEach(value, isDenied);
    case 'web_records':
      return isMembers(value) && dropFromEach(value.records, isDenied);
    case 'by_field':
      return dropMembers(value, isDenied);
    case 'groups':
      return dropFromEach(value, (name) => denied.has(name.split(':')[0] as string));
    default:
      return false;
  }
}

/** Whether an answer's bytes may hold a denied name (a member name is a JSON string: `"vat"`). */
function mayHold(json: Buffer, denied: ReadonlySet<string>): boolean {
  for (const name of denied) if (json.includes(`"${name}`)) return true;
  return false;
}

/**
 * `outcome` without the denied fields of the call's model: a result's value changed in place, a
 * raw result re-written (numbers as spelt) only when something was removed.
 */
export function filterOutcome(
  outcome: ErpOutcome,
  shape: AnswerShape,
  denied: ReadonlySet<string>,
): ErpOutcome {
  if (shape === 'none' || outcome.kind === 'erp_error') return outcome;
  if (outcome.kind === 'result') {
    removeDeniedFields(outcome.value, shape, denied);
    return outcome;
  }
  if (!mayHold(outcome.json, denied)) return outcome;
  const value: LosslessValue = parseLossless(outcome.json.toString('utf8'));
  if (!removeDeniedFields(value, shape, denied)) return outcome;
  return { kind: 'raw_result', json: Buffer.from(stringifyLossless(value), 'utf8') };
}
