/**
 * @module platform/model-rules
 * The maps a key policy keys by model (`methods`, `fields`; README, "Key policies"): a key is an
 * exact model name, a `prefix.*` glob or `*` (every model). The most specific key applies, never
 * merged with another: the exact name, else the longest matching glob, else `*`.
 */
import { MODEL_NAME } from './erp-names.ts';

/** A model-keyed map, compiled once at load. */
export interface ModelRules<T> {
  readonly exact: ReadonlyMap<string, T>;
  /** The globs' prefixes (with their dot), longest first, and their values. */
  readonly globs: readonly (readonly [string, T])[];
  /** The `*` entry's value. */
  readonly star: T | undefined;
}

/** A key of a model-keyed map: a model name, `prefix.*`, or `*`. */
export const MODEL_RULE_KEY = /^(?:\*|[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*(?:\.\*)?)$/;

/** Compiles a model-keyed map whose keys match {@link MODEL_RULE_KEY}, each value mapped once by `compile`. */
export function compileModelRules<I, T>(
  entries: Readonly<Record<string, I>>,
  compile: (value: I) => T,
): ModelRules<T> {
  const exact = new Map<string, T>();
  const globs: [string, T][] = [];
  let star: T | undefined;
  for (const [key, value] of Object.entries(entries)) {
    const compiled = compile(value);
    if (key === '*') star = compiled;
    else if (key.endsWith('.*')) globs.push([key.slice(0, -1), compiled]);
    else exact.set(key, compiled);
  }
  globs.sort((a, b) => b[0].length - a[0].length);
  return Object.freeze({ exact, globs: Object.freeze(globs), star });
}

/**
 * The value of the most specific key matching `model` (exactly as sent to the ERP), if any: a glob
 * matches only a valid model name longer than its prefix (so `sale.*` never matches `sale.`).
 *
 * @example
 * ruleFor(compileModelRules({ 'sale.*': 1, 'sale.order.*': 2, '*': 3 }, (v) => v), 'sale.order.line') // 2
 */
export function ruleFor<T>(rules: ModelRules<T>, model: string): T | undefined {
  const exact = rules.exact.get(model);
  if (exact !== undefined) return exact;
  for (const [prefix, value] of rules.globs) {
    if (model.length > prefix.length && model.startsWith(prefix) && MODEL_NAME.test(model)) return value;
  }
  return rules.star;
}
