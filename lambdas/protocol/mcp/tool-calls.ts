/**
 * @module protocol/mcp/tool-calls
 * `tools/list` and `tools/call`, the same in every protocol revision: the tools a deployment
 * offers (core/mcp/tools.ts, each declared once) with their JSON Schemas
 * (core/mcp/tool-schemas.json), and one call as a pipeline of values (docs/design.md, "The
 * tools/call pipeline"):
 *
 * 1. the call parsed (`params.name`, `params.arguments`): else -32602;
 * 2. the declared tool: unknown is -32602; a write tool while writes are off is a tool error;
 * 3. an OAuth caller's scopes: a write tool with a token that does not grant `erp.write` is 403
 *    `insufficient_scope` (thrown: an HTTP answer, not an MCP result);
 * 4. the arguments against the tool's schema: else a tool error naming them;
 * 5. the run (core/mcp/run-tool.ts): the key's policy, then the ERP, as a `ToolRun` value.
 *
 * Each step returns the call's result with its facts ({@link ToolCallAnswer}); nothing re-reads
 * an answer it built. Protocol errors (a malformed call, an unknown tool) are JSON-RPC errors
 * -32602, as the 2026-07-28 revision (server/tools, "Error Handling") asks; arguments that do
 * not fit the tool's schema and everything that fails while the tool runs are tool results with
 * `isError: true`, which a model reads and can act on.
 */
import * as z from 'zod/mini';
import { policyConfirms } from '../../core/confirm/policy.ts';
import { toolsForKey } from '../../core/key-policy-check.ts';
import type { McpInbound } from '../../core/mcp/connection.ts';
import type { McpDeps } from '../../core/mcp/erp-access.ts';
import { runTool, type ToolCall, type ToolRun } from '../../core/mcp/run-tool.ts';
import TOOL_INPUT_SCHEMAS from '../../core/mcp/tool-schemas.json' with { type: 'json' };
import { declaredTool, type McpTool, offeredTools } from '../../core/mcp/tools.ts';
import { confirmsTool } from '../../core/mcp/write-tools.ts';
import type { RequestFacts } from '../../core/request-facts.ts';
import { learnedBefore, withFacts } from '../../core/request-facts.ts';
import { printable } from '../../platform/bounded-text.ts';
import { isJsonObject } from '../../platform/json.ts';
import type { KeyPolicy } from '../../platform/key-policy.ts';
import { insufficientScope } from '../oauth/resource-server.ts';
import {
  CONFIRMED_TOOL_NOTE,
  confirmationFailure,
  confirmRequestOf,
  inputRequired,
  unconfirmedResult,
} from './confirmation.ts';
import { META_KEYS } from './eras.ts';
import { type JsonObject, RPC, RpcFailure } from './messages.ts';

/** The most array elements and object members a tool's arguments may hold. */
export const MAX_TOOL_INPUT_ELEMENTS = 10_000;

/** A tool as `tools/list` lists it. */
export interface ListedTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  /** The read tools' (their results' `structuredContent`). */
  readonly outputSchema?: JsonObject;
  readonly annotations: JsonObject;
  /** Legacy revisions only (2025-11-25's task support); 2026-07-28 moved tasks to an extension. */
  readonly execution?: { readonly taskSupport: 'forbidden' };
}

/** A tool result (`CallToolResult`), in the order of its members a client receives. */
export interface ToolResult {
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: true;
}

/** The era a listing is for: the legacy revisions list `execution`, 2026-07-28 does not. */
export type ListingEra = 'legacy' | 'modern';

const listed = new Map<string, readonly ListedTool[]>();

/**
 * `tools/list`'s tools, built once per write setting and era. The JSON Schemas are
 * tool-schemas.json's (a test keeps them equal to what the SDK makes of the tools' zod schemas),
 * so none is converted at run time.
 */
export function toolList(writeTools: boolean, era: ListingEra): readonly ListedTool[] {
  const key = `${writeTools}:${era}`;
  let tools = listed.get(key);
  if (tools === undefined) {
    const schemas = TOOL_INPUT_SCHEMAS as Record<string, JsonObject | undefined>;
    tools = offeredTools(writeTools).map((definition) => {
      const inputSchema = schemas[definition.name];
      if (inputSchema === undefined) throw new Error(`no JSON Schema for the tool ${definition.name}`);
      return {
        name: definition.name,
        title: definition.title,
        description: definition.description,
        inputSchema,
        ...(definition.outputSchema === undefined
          ? {}
          : { outputSchema: definition.outputSchema as JsonObject }),
        annotations: definition.annotations as JsonObject,
        ...(era === 'legacy' ? { execution: { taskSupport: 'forbidden' as const } } : {}),
      };
    });
    listed.set(key, tools);
  }
  return tools;
}

/**
 * `tools/list`'s tools for one caller: {@link toolList}, less the tools the caller key's policy
 * does not allow (README, "Key policies": no write tool for a read key), the tools it has a
 * person confirm marked in their description.
 */
export function toolListFor(
  writeTools: boolean,
  era: ListingEra,
  policy: KeyPolicy | undefined,
): readonly ListedTool[] {
  const all = toolList(writeTools, era);
  if (policy === undefined) return all;
  const mayUse = new Set<string>(
    toolsForKey(offeredTools(writeTools), policy).map((definition) => definition.name),
  );
  const tools = all.filter((tool) => mayUse.has(tool.name));
  if (!policyConfirms(policy)) return tools;
  // The tools a person confirms say so, so an agent knows before it calls (protocol/mcp/confirmation.ts).
  return tools.map((tool) =>
    confirmsTool(policy, tool.name) ? { ...tool, description: tool.description + CONFIRMED_TOOL_NOTE } : tool,
  );
}

/** Counts array elements and object members in `value`, stopping once the count passes `max`. */
function inputElementCount(value: unknown, max: number): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (++count > max) return count;
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return count;
}

/** A dotted path of a zod issue (`domain[2].x`). */
function dotPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'object root';
  return path.reduce<string>((text, segment, index) => {
    if (index === 0) return String(segment);
    return typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${String(segment)}`;
  }, '');
}

/** Edit distance of two short names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Arguments the tool does not take: named, with the one meant when a name is a near miss
 * (`feilds`: did you mean `fields`?), and the arguments it takes. Never dropped silently: a
 * misspelt `fields` would otherwise read every field.
 */
function unknownArguments(
  tool: string,
  keys: readonly string[],
  known: readonly string[],
  path: readonly PropertyKey[],
): string {
  const names = keys.map((key) => {
    const near = known.find(
      (name) => distance(key.toLowerCase(), name) <= Math.min(2, Math.floor(name.length / 3)),
    );
    return `${JSON.stringify(key.slice(0, 64))}${near === undefined ? '' : ` (did you mean ${near}?)`}`;
  });
  const where = path.length === 0 ? '' : ` in ${dotPath(path)}`;
  return `${tool} does not take the argument${names.length > 1 ? 's' : ''} ${names.join(', ')}${where}; it takes ${known.join(', ') || 'no arguments'}`;
}

/** A tool error result with a sentence for the model. */
function toolError(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The tool's arguments, checked; or the text of the tool error that says what does not fit. */
async function checkedArguments(
  definition: McpTool,
  args: JsonObject | undefined,
): Promise<{ readonly args: unknown } | { readonly error: string }> {
  if (inputElementCount(args, MAX_TOOL_INPUT_ELEMENTS) > MAX_TOOL_INPUT_ELEMENTS) {
    return {
      error: `MCP error -32602: Invalid arguments for tool ${definition.name}: arguments contain more than the maximum of ${MAX_TOOL_INPUT_ELEMENTS} elements`,
    };
  }
  const schema = definition.input();
  const parsed = await z.safeParseAsync(schema, args ?? {});
  if (parsed.success) return { args: parsed.data };
  const known = Object.keys(schema.shape);
  const message = parsed.error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return unknownArguments(definition.name, issue.keys, known, issue.path);
      return issue.path.length === 0 ? issue.message : `${issue.message} at ${dotPath(issue.path)}`;
    })
    .join('\n');
  return {
    error: `MCP error -32602: Input validation error: Invalid arguments for tool ${definition.name}: ${message}`,
  };
}

/** `tools/call`'s params, or the -32602 a malformed call is. */
export function toolCallParams(params: JsonObject): {
  readonly name: string;
  readonly args: JsonObject | undefined;
} {
  const { name, arguments: args } = params;
  if (typeof name !== 'string') {
    throw new RpcFailure({
      code: RPC.invalidParams,
      message: 'Invalid params: tools/call needs params.name, the name of a tool (a string)',
    });
  }
  if (args !== undefined && !isJsonObject(args)) {
    throw new RpcFailure({
      code: RPC.invalidParams,
      message: `Invalid params: tools/call's params.arguments must be an object of the tool's arguments by name, got ${Array.isArray(args) ? 'an array' : args === null ? 'null' : `a ${typeof args}`}`,
    });
  }
  return { name, args };
}

/**
 * A caller signed in with OAuth: the scopes its token grants, and this resource's identifier
 * (named in a scope challenge). Absent for a proxy key's caller.
 */
export interface TokenGrant {
  readonly scopes: ReadonlySet<string>;
  readonly resource: string;
}

/** What a call needs of the request beyond its params. */
export interface ToolCallContext {
  readonly inbound: McpInbound;
  readonly deps: McpDeps;
  readonly token?: TokenGrant | undefined;
}

/** What a `tools/call` answers: a tool result, or an input-required result (a person is asked). */
export type CallResult = ToolResult | JsonObject;

/** A call's result, and what the request log line and the metrics learn of it. */
export interface ToolCallAnswer {
  readonly result: CallResult;
  readonly facts: RequestFacts;
}

/** A call refused before its tool ran (writes off, arguments that do not fit): counted as -32602. */
function refusedCall(tool: McpTool, text: string): ToolCallAnswer {
  return {
    result: toolError(text),
    facts: { tool: tool.name, outcome: 'proxy_error', errorCode: RPC.invalidParams },
  };
}

/**
 * Step 3: a write tool called with an access token that does not grant `erp.write` is 403
 * `insufficient_scope` naming `erp.write`, so the client can sign in again with more (MCP
 * authorization, "Scope challenge"). A proxy key's caller has no scopes: its key's policy decides.
 */
function checkScope(token: TokenGrant | undefined, tool: McpTool): void {
  if (!token || !tool.writes || token.scopes.has('erp.write')) return;
  throw insufficientScope(
    token.resource,
    ['erp.read', 'erp.write'],
    `the ${tool.name} tool changes ERP data, which needs erp.write`,
  );
}

/** Step 2: the tool a call names, or the tool error of a write tool while writes are off. */
function offeredTool(name: string, writeTools: boolean): McpTool | ToolCallAnswer {
  const tool = declaredTool(name);
  if (tool === undefined) throw new RpcFailure({ code: RPC.invalidParams, message: `Unknown tool: ${name}` });
  if (tool.writes && !writeTools) {
    return refusedCall(
      tool,
      `The tool ${name} changes ERP data, and writes are off on this server: it offers the read tools only. ` +
        'An operator of this erp-proxy enables the write tools (MCP_WRITE_TOOLS=true); calling again will not help until then.',
    );
  }
  return tool;
}

/**
 * A run's outcome as an MCP result: a tool result, or a confirmation's (an input-required result, a
 * declined one); a confirmation refused at the protocol level is thrown as its JSON-RPC error
 * (protocol/mcp/confirmation.ts), carrying the run's facts for the log line and metrics.
 */
function toolResult(run: ToolRun): CallResult {
  const { outcome } = run;
  if (outcome.ok === 'confirmation') {
    const { confirmation } = outcome;
    if (confirmation.kind === 'ask') return inputRequired(confirmation.form, confirmation.requestState);
    if (confirmation.kind === 'answered') return unconfirmedResult(confirmation.outcome);
    throw withFacts(confirmationFailure(confirmation.refusal), run.facts);
  }
  if (!outcome.ok) return toolError(outcome.text);
  const { answer } = outcome;
  return {
    content: [
      { type: 'text', text: answer.json },
      ...(answer.note === undefined ? [] : [{ type: 'text' as const, text: answer.note }]),
    ],
    ...(answer.structured === undefined ? {} : { structuredContent: answer.structured }),
  };
}

/**
 * The MCP client's name and version as a 2026-07-28 request's `_meta` says them (the audit records
 * them as self-reported); a legacy request said them only in its `initialize`.
 */
function clientOf(params: JsonObject): ToolCall['client'] {
  const meta = params._meta;
  const info = isJsonObject(meta) ? meta[META_KEYS.clientInfo] : undefined;
  if (!isJsonObject(info)) return undefined;
  const name = typeof info.name === 'string' ? printable(info.name) : undefined;
  if (name === undefined) return undefined;
  const version = typeof info.version === 'string' ? printable(info.version) : undefined;
  return version === undefined ? { name } : { name, version };
}

/**
 * One `tools/call` (the pipeline of the module header): the tool's result with its facts, or an
 * {@link RpcFailure} -32602 for a malformed call or an unknown tool. Anything thrown after the tool
 * is known (the scope challenge) carries its name for the log line.
 */
export async function callTool(
  params: JsonObject,
  context: ToolCallContext,
  era: 'modern' | 'legacy',
): Promise<ToolCallAnswer> {
  const { name, args } = toolCallParams(params);
  const { deps, inbound, token } = context;
  const tool = offeredTool(name, deps.writeTools);
  if ('result' in tool) return tool;
  return learnedBefore({ tool: tool.name }, async () => {
    checkScope(token, tool);
    const checked = await checkedArguments(tool, args);
    if ('error' in checked) return refusedCall(tool, checked.error);
    const client = clientOf(params);
    const call: ToolCall = {
      tool,
      args: checked.args,
      confirm: confirmRequestOf(params, era),
      ...(client === undefined ? {} : { client }),
    };
    const run = await runTool(call, inbound, deps);
    return { result: toolResult(run), facts: run.facts };
  });
}
