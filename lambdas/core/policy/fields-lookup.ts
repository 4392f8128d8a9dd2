/**
 * @module core/policy/fields-lookup
 * The relations the `fields` rule follows (a dotted path, a nested specification, x2many values):
 * each model's `fields_get` (`type`, `relation`), asked of the ERP by the proxy itself (not a call
 * of the caller's: never counted against a limit) and kept per target, database, model and ERP
 * version, so a path costs at most one lookup per relation, once.
 */
import { isJsonObject } from '../../platform/json.ts';
import type { FieldsOf } from './field-rule.ts';

/** How long a model's relations are kept (a module installed adds fields; the version is in the key). */
const TTL_MS = 10 * 60 * 1000;
const MAX_ENTRIES = 1000;

const cache = new Map<
  string,
  { readonly relations: ReadonlyMap<string, string | undefined>; readonly expires: number }
>();

/** The relation of each field of a `fields_get` answer (`undefined` for a field that has none). */
export function relationsOf(answer: unknown): ReadonlyMap<string, string | undefined> {
  const relations = new Map<string, string | undefined>();
  if (!isJsonObject(answer)) return relations;
  for (const [name, field] of Object.entries(answer)) {
    const relation = isJsonObject(field) ? field.relation : undefined;
    relations.set(name, typeof relation === 'string' && relation !== '' ? relation : undefined);
  }
  return relations;
}

/**
 * A {@link FieldsOf} for one ERP and database: `scope` names them and the ERP's version (a cache
 * key holding no secret), `fieldsGet(model)` asks the ERP for `fields_get(attributes=["type",
 * "relation"])` and answers its value, or `undefined` when the ERP refused: no field is then known
 * (the rule refuses a path through it) and nothing is kept. A lookup that throws is not kept either.
 */
export function cachedFieldsOf(scope: string, fieldsGet: (model: string) => Promise<unknown>): FieldsOf {
  return async (model) => {
    const key = `${scope}\n${model}`;
    const now = Date.now();
    const kept = cache.get(key);
    if (kept !== undefined && kept.expires > now) return kept.relations;
    const answer = await fieldsGet(model);
    if (answer === undefined) return new Map();
    const relations = relationsOf(answer);
    cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { relations, expires: now + TTL_MS });
    return relations;
  };
}
