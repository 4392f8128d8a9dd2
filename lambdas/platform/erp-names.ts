/**
 * @module platform/erp-names
 * The one grammar of ERP model and method names, defined once: the request schemas (core/schemas.ts),
 * the v2 checks (-32007), the MCP tools' arguments, the key policies' `models` entries
 * (platform/key-policy.ts) and every ERP path the proxy builds from a name (JSON-2's
 * `/json/2/<model>/<method>`, `/doc-bearer/<model>.json`: upstream/erp-paths.ts) use it.
 *
 * A name taken from a caller is checked against this grammar before any rule reads it (docs/guide/policies.md,
 * "What each rule reads"): Odoo's server decodes percent-escapes in a path and `?` starts a query
 * string, so a `model_id` of `res.partner/write?` would reach another route than the rules read.
 * The path builders (upstream/erp-paths.ts) check again and encode each segment, so a route that
 * forgot the first check still never sends another path.
 */
/** A valid ERP model name: dotted identifiers (`res.partner`, `x_custom.model_2`). */
export const MODEL_NAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
/** A valid ERP method name: a Python identifier. A leading `_` is left to the ERP to refuse. */
export const METHOD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Longest model or method name forwarded (they become an upstream path): far above any real ERP
 * name, far below what a front proxy refuses.
 */
export const MAX_NAME_LENGTH = 256;

/** Whether `name` is a model name of the grammar, at most {@link MAX_NAME_LENGTH} characters. */
export function isModelName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && MODEL_NAME.test(name);
}

/** Whether `name` is a method name of the grammar, at most {@link MAX_NAME_LENGTH} characters. */
export function isMethodName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && METHOD_NAME.test(name);
}
