/**
 * @module platform/erp-names
 * The shapes of ERP model and method names, defined once: the request schemas (core/schemas.ts),
 * the MCP tools' arguments and the key policies' `models` entries (platform/key-policy.ts) use them.
 */

/** A valid ERP model name: dotted identifiers (`res.partner`, `x_custom.model_2`). */
export const MODEL_NAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
/** A valid ERP method name: a Python identifier. A leading `_` is left to the ERP to refuse. */
export const METHOD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
