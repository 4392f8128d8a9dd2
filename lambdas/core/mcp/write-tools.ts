/**
 * @module core/mcp/write-tools
 * The `confirm` rule against the MCP tool declarations (core/mcp/tools.ts: the one list of tools and
 * of which ones write), for the functions that serve the tools: kept apart from core/confirm/policy.ts
 * so the execute, version and aux bundles, which need only that policy's shape, do not carry the
 * tool declarations (about 20 KB minified: docs/reference/performance.md).
 */
import { isReadMethod, type KeyPolicy } from '../../platform/key-policy.ts';
import { TOOLS } from './tools.ts';

/** The names of the declared tools that write, in declaration order (read from core/mcp/tools.ts). */
export const WRITE_TOOL_NAMES: readonly string[] = Object.freeze(
  TOOLS.filter((tool) => tool.writes).map((tool) => tool.name),
);

/** Whether a policy has a person confirm the tool `name` (a write tool). */
export function confirmsTool(policy: KeyPolicy | undefined, name: string): boolean {
  const confirm = policy?.confirm;
  if (confirm === undefined) return false;
  return confirm === 'writes' ? WRITE_TOOL_NAMES.includes(name) : confirm.has(name);
}

/**
 * Whether a call of `tool` with its checked arguments waits for a person: a write tool the policy
 * names, unless it is a `call_method` of a method on the read list (it cannot change data).
 */
export function needsConfirmation(
  policy: KeyPolicy | undefined,
  tool: { readonly name: string; readonly writes: boolean },
  args: unknown,
): boolean {
  if (!tool.writes || !confirmsTool(policy, tool.name)) return false;
  if (tool.name !== 'call_method') return true;
  const method = (args as { readonly method?: unknown } | null)?.method;
  return typeof method !== 'string' || !isReadMethod(method);
}
