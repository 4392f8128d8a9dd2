/**
 * @module core/mcp/serve
 * `POST /mcp`, once the caller is authenticated and licensed and the body is read: MCP's
 * Streamable HTTP transport in stateless mode with JSON responses (no server-sent events: API
 * Gateway's HTTP APIs do not stream), served by the official SDK (`@modelcontextprotocol/sdk`):
 * its `Server`, with `tools/list` and `tools/call` answered as its `McpServer` would answer them,
 * over a transport of the SDK's `Transport` interface that answers as its web-standard Streamable
 * HTTP transport does in this mode (core/mcp/transport.ts), without web `Request`/`Response`.
 * Each request gets a server and a transport of its own, as the SDK's stateless mode requires,
 * with the tools bound to that request's ERP connection and state; what does not depend on the
 * request (the tools' JSON Schemas and zod schemas) is built once.
 *
 * The SDK sees only the headers of the protocol (`accept`, `content-type`,
 * `mcp-protocol-version`), never a key. Protocol errors stay the SDK's (JSON-RPC errors, 4xx);
 * a tool that fails answers a result with `isError: true` (core/mcp/answers.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/mini';
import { InternalError, InvalidRequestError, ParseError, ProxyError } from '../../platform/errors.ts';
import { isJsonObject, MAX_JSON_DEPTH } from '../../platform/json.ts';
import { type McpToolName, SERVICE_NAME } from '../../platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_VERSION } from '../../platform/package-info.ts';
import type { Answer } from '../envelope.ts';
import { withCallContext } from '../forward.ts';
import { checkKeyPolicy, toolsForKey } from '../key-policy-check.ts';
import { type FactSheet, factsOf, withFacts } from '../request-facts.ts';
import {
  erpFailure,
  failureJson,
  MAX_RESULT_WORDS,
  proxyFailure,
  type ToolAnswer,
  type ToolFailure,
} from './answers.ts';
import type { McpInbound } from './connection.ts';
import { ErpAccess, ErpCallError, type McpDeps } from './erp-access.ts';
import TOOL_INPUT_SCHEMAS from './tool-schemas.json' with { type: 'json' };
import { offeredTools, type ToolDefinition } from './tools.ts';
import { StatelessJsonTransport } from './transport.ts';

/** JSON-RPC's "invalid params": the code a `tools/call` the SDK refused is counted under. */
const INVALID_PARAMS = -32602;

/** The most array elements and object members a tool's arguments may hold (checked as McpServer checks it). */
const MAX_TOOL_INPUT_ELEMENTS = 10_000;

/** What `initialize` tells the agent about this server. */
export const MCP_INSTRUCTIONS =
  "Tools for one Odoo ERP, reached through erp-proxy with the connection set in this MCP client's configuration; " +
  "the ERP user's access rights apply. Learn names with list_models and fields_get; search_read takes an Odoo " +
  'domain such as [["is_company", "=", true]] and the fields you need. Results are JSON text of at most ' +
  `${MAX_RESULT_WORDS}; a second text says how to get the rest when there is more. ` +
  'A failed call is a result with isError: true whose JSON gives the code, the message, the ERP exception name ' +
  'and whether retrying is safe.';

/**
 * The SDK asks for a JSON Schema validator for elicitation, which this server never uses; the
 * default one (Ajv) would be built, and its formats compiled, for every request.
 */
const NO_SCHEMA_VALIDATION = {
  getValidator() {
    return () => ({
      valid: false as const,
      data: undefined,
      errorMessage: 'erp-proxy validates no JSON Schema (it never elicits input)',
    });
  },
};

function textContent(answer: ToolAnswer): CallToolResult {
  return {
    content: [
      { type: 'text', text: answer.json },
      ...(answer.note === undefined ? [] : [{ type: 'text' as const, text: answer.note }]),
    ],
  };
}

/** A tool's failure: the result, and what the request log and metrics record. */
function failureResult(state: FactSheet, failure: ToolFailure): CallToolResult {
  state.outcome = failure.source === 'erp' ? 'erp_error' : 'proxy_error';
  state.errorCode = failure.code;
  return { content: [{ type: 'text', text: failureJson(failure) }], isError: true };
}

/** Runs one tool within the request's time budget; every failure becomes its result. */
async function runTool(
  definition: ToolDefinition,
  args: unknown,
  inbound: McpInbound,
  state: FactSheet,
  deps: McpDeps,
): Promise<CallToolResult> {
  state.tool = definition.name;
  const readOnly = !definition.writes;
  try {
    // The caller key's policy: a tool that changes data is refused to a read key (-32008).
    checkKeyPolicy(inbound.keyPolicy, { tool: definition });
    const { value: answer, upstream } = await withCallContext(inbound, deps.config, (context) =>
      definition.run(args as never, new ErpAccess(inbound, state, deps, context)),
    );
    Object.assign(state, upstream);
    state.outcome = 'success';
    return textContent(answer);
  } catch (error) {
    Object.assign(state, factsOf(error));
    if (error instanceof ErpCallError) {
      return failureResult(state, erpFailure(error.code, error.erpMessage, error.data));
    }
    if (error instanceof ProxyError) return failureResult(state, proxyFailure(error, readOnly));
    // A bug: logged with its stack (observe reads it), shown as -32603 without details.
    state.internalError = error;
    return failureResult(state, proxyFailure(new InternalError(error), readOnly));
  }
}

/** What `initialize` tells of this server. */
const SERVER_INFO = {
  name: SERVICE_NAME,
  title: 'erp-proxy (Odoo ERP)',
  version: PROXY_VERSION,
  description: PROXY_DESCRIPTION,
};

/**
 * `tools/list`'s tools, as the SDK's `McpServer` lists tools registered with these definitions
 * (name, title, description, input JSON Schema, annotations, execution); built once per
 * `writeTools`. The JSON Schemas are tool-schemas.json's, which test/unit/mcp-transport.test.ts
 * keeps equal to what the SDK makes of the tools' zod schemas, so none is converted at run time.
 */
const listedTools = new Map<boolean, readonly Tool[]>();

function toolList(writeTools: boolean): readonly Tool[] {
  let tools = listedTools.get(writeTools);
  if (tools === undefined) {
    const schemas = TOOL_INPUT_SCHEMAS as Record<string, Tool['inputSchema'] | undefined>;
    tools = offeredTools(writeTools).map((definition) => {
      const inputSchema = schemas[definition.name];
      if (inputSchema === undefined) throw new Error(`no JSON Schema for the tool ${definition.name}`);
      return {
        name: definition.name,
        title: definition.title,
        description: definition.description,
        inputSchema,
        annotations: definition.annotations,
        // What McpServer's registerTool gives every tool.
        execution: { taskSupport: 'forbidden' },
      };
    });
    listedTools.set(writeTools, tools);
  }
  return tools;
}

/** Counts array elements and object members in `value`, stopping once the count passes `max` (as McpServer). */
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

/** A dotted path of a zod issue, as McpServer words it. */
function dotPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'object root';
  return path.reduce<string>((text, segment, index) => {
    if (index === 0) return String(segment);
    return typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${String(segment)}`;
  }, '');
}

/** A tool's arguments, checked as McpServer checks them; McpError -32602 when they do not fit. */
async function validArguments(definition: ToolDefinition, args: unknown): Promise<unknown> {
  if (inputElementCount(args, MAX_TOOL_INPUT_ELEMENTS) > MAX_TOOL_INPUT_ELEMENTS) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid arguments for tool ${definition.name}: arguments contain more than the maximum of ${MAX_TOOL_INPUT_ELEMENTS} elements`,
    );
  }
  const parsed = await z.safeParseAsync(definition.input(), args ?? {});
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.message} at ${dotPath(issue.path)}`))
    .join('\n');
  throw new McpError(
    ErrorCode.InvalidParams,
    `Input validation error: Invalid arguments for tool ${definition.name}: ${message}`,
  );
}

/**
 * A server with the offered tools, bound to this request: the SDK's `Server` with the handlers
 * its `McpServer` would set for these tools (the same capabilities, list, checks and messages:
 * an unknown tool or arguments that do not fit are a result with `isError: true`).
 */
function createServer(inbound: McpInbound, state: FactSheet, deps: McpDeps): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: true } },
    instructions: MCP_INSTRUCTIONS,
    jsonSchemaValidator: NO_SCHEMA_VALIDATION,
  });
  const tools = offeredTools(deps.writeTools);
  // Only the tools the caller's key may use (README, "Key policies").
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const mayUse = new Set(toolsForKey(tools, inbound.keyPolicy).map((definition) => definition.name));
    return { tools: toolList(deps.writeTools).filter((listed) => mayUse.has(listed.name as McpToolName)) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      const definition = tools.find((candidate) => candidate.name === request.params.name);
      if (definition === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
      }
      const args = await validArguments(definition, request.params.arguments);
      return await runTool(definition, args, inbound, state, deps);
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.UrlElicitationRequired) throw error;
      return {
        content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
        isError: true,
      };
    }
  });
  return server;
}

/** The JSON-RPC error code of an answer body, if it is one. */
function jsonRpcErrorCode(text: string): number | undefined {
  try {
    const body: unknown = JSON.parse(text);
    const error = isJsonObject(body) ? body.error : undefined;
    return isJsonObject(error) && typeof error.code === 'number' ? error.code : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an answer body is a tool result with `isError: true`. */
function isToolError(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text);
    return isJsonObject(body) && isJsonObject(body.result) && body.result.isError === true;
  } catch {
    return false;
  }
}

/** Records how a request the tools did not answer ended (protocol messages, protocol errors). */
function recordProtocolOutcome(state: FactSheet, status: number, text: string): void {
  if (state.outcome !== undefined) return;
  const code = jsonRpcErrorCode(text);
  if (status >= 400 || code !== undefined) {
    state.outcome = 'proxy_error';
    if (code !== undefined) state.errorCode = code;
  } else if (state.mcpMethod === 'tools/call' && isToolError(text)) {
    // An unknown tool or arguments that do not fit its schema: the SDK answered before the tool ran.
    state.outcome = 'proxy_error';
    state.errorCode = INVALID_PARAMS;
  } else {
    state.outcome = 'success';
  }
}

/**
 * Serves one MCP message (README, "Agents (MCP)"). What the tools learn (the ERP calls run inside
 * the SDK's callbacks) is gathered on this request's own sheet and returned as the answer's facts.
 */
export async function serveMcp(inbound: McpInbound, deps: McpDeps): Promise<Answer> {
  const state: FactSheet = {};
  const { body } = inbound;
  if (!body.ok) throw new ParseError(`Parse error: ${body.problem ?? 'the request body is not valid JSON'}`);
  if (body.tooDeep) {
    throw new InvalidRequestError(`Invalid request: the body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (Array.isArray(body.value)) {
    throw new InvalidRequestError(
      'Invalid request: /mcp takes one JSON-RPC message per request, not a batch (MCP 2025-06-18 removed batches).',
    );
  }
  if (isJsonObject(body.value) && typeof body.value.method === 'string') state.mcpMethod = body.value.method;

  const server = createServer(inbound, state, deps);
  const transport = new StatelessJsonTransport();
  try {
    await server.connect(transport);
    const answer = await transport.handle(inbound.protocolHeaders, body.value);
    recordProtocolOutcome(state, answer.status, answer.body);
    return {
      response: { statusCode: answer.status, headers: { ...answer.headers }, body: answer.body },
      facts: state,
    };
  } catch (error) {
    throw withFacts(error, state);
  } finally {
    await server.close();
  }
}
