/**
 * @module core/policy/fields-lookup
 * The fields the `fields` rule reads of a model: their relations (a dotted path, a nested
 * specification, x2many values lead there) and related paths (a field that carries another model's,
 * by `related` or delegation): each model's `fields_get` (`type`, `relation`, `related`), asked of the ERP by the proxy itself (not a call
 * of the caller's: never counted against a limit) and kept per target, database, model and ERP
 * version, so a path costs at most one lookup per relation, once.
 */
import { isJsonObject } from '../../platform/json.ts';
import type { FieldInfo, FieldsOf } from './field-rule.ts';

/** How long a model's relations are kept (a module installed adds fields; the version is in the key). */
const TTL_MS = 10 * 60 * 1000;
const MAX_ENTRIES = 1000;

const cache = new Map<
  string,
  { readonly fields: ReadonlyMap<string, FieldInfo>; readonly expires: number }
>();

const NOT_RELATIONAL: FieldInfo = Object.freeze({});

/** A non-empty string attribute, else `undefined`. */
function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * What each field of a `fields_get` answer tells the rules: its relation and its related path
 * (Odoo gives `related` as a dotted string: `partner_id.email`; a field that is not related has none).
 */
export function fieldInfosOf(answer: unknown): ReadonlyMap<string, FieldInfo> {
  const fields = new Map<string, FieldInfo>();
  if (!isJsonObject(answer)) return fields;
  for (const [name, field] of Object.entries(answer)) {
    const relation = isJsonObject(field) ? textOf(field.relation) : undefined;
    const related = isJsonObject(field) ? textOf(field.related) : undefined;
    fields.set(
      name,
      relation === undefined && related === undefined
        ? NOT_RELATIONAL
        : Object.freeze({
            ...(relation === undefined ? {} : { relation }),
            ...(related === undefined ? {} : { related }),
          }),
    );
  }
  return fields;
}

/**
 * A {@link FieldsOf} for one ERP and database: `scope` names them and the ERP's version (a cache
 * key holding no secret), `fieldsGet(model)` asks the ERP for `fields_get(attributes=["type",
 * "relation", "related"])` and answers its value, or `undefined` when the ERP refused: no field is then known
 * (the rule refuses a path through it) and nothing is kept. A lookup that throws is not kept either.
 */
export function cachedFieldsOf(scope: string, fieldsGet: (model: string) => Promise<unknown>): FieldsOf {
  return async (model) => {
    const key = `${scope}\n${model}`;
    const now = Date.now();
    const kept = cache.get(key);
    if (kept !== undefined && kept.expires > now) return kept.fields;
    const answer = await fieldsGet(model);
    if (answer === undefined) return new Map();
    const fields = fieldInfosOf(answer);
    cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { fields, expires: now + TTL_MS });
    return fields;
  };
}
