/**
 * @module json
 * Small JSON helpers shared by request validation and the transports.
 */

/**
 * Deepest nesting the proxy accepts in a request or an ERP answer. Real ERP payloads nest a
 * dozen levels at most (x2many commands inside values inside lists); `JSON.parse` accepts far
 * deeper input than `JSON.stringify` can write back (it overflows the stack), so the bound
 * keeps such input a clear error instead of an internal one.
 */
export const MAX_JSON_DEPTH = 100;

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether a parsed JSON value nests deeper than `maxDepth` (checked without recursion). */
export function exceedsDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ node: object; depth: number }> = [];
  if (value !== null && typeof value === 'object') pending.push({ node: value, depth: 1 });
  while (pending.length > 0) {
    const { node, depth } = pending.pop()!;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}
