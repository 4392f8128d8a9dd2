/**
 * @module protocol/mcp/legacy
 * The revisions that open with `initialize` (2025-11-25, 2025-06-18, 2025-03-26), served
 * statelessly as the MCP SDK's server (`@modelcontextprotocol/sdk` 1.32.2, `McpServer` over its
 * web-standard Streamable HTTP transport with `sessionIdGenerator: undefined` and
 * `enableJsonResponse: true`) served them before: the same results, capabilities and error
 * messages (test/unit/mcp-protocol.test.ts compares them case by case), except where the
 * 2026-07-28 revision corrected what the SDK did (an unknown tool and a malformed `tools/call`
 * are -32602, not a tool result or a -32603 with a schema library's dump).
 *
 * No session: `initialize` answers the version it negotiates and the server forgets it; each
 * later request is served on its own, as in the SDK's stateless mode.
 */
import { MCP_INSTRUCTIONS, SERVER_INFO } from '../../core/mcp/server-info.ts';
import { isJsonObject } from '../../platform/json.ts';
import { LEGACY_VERSIONS } from './eras.ts';
import {
  ACCEPTED_ANSWER,
  answerRequest,
  type JsonObject,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type McpAnswer,
  type MethodResult,
  RPC,
  RpcFailure,
  served,
} from './messages.ts';
import { callTool, type ToolCallContext, toolListFor } from './tool-calls.ts';

/** The capabilities the legacy revisions are told (as the SDK's `McpServer` declared them for tools). */
const LEGACY_CAPABILITIES = Object.freeze({ tools: Object.freeze({ listChanged: true }) });

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** `initialize`: the client's version when served, else the newest legacy one (the client then decides). */
function initialize(params: JsonObject): JsonObject {
  const { protocolVersion, capabilities, clientInfo } = params;
  if (
    !isString(protocolVersion) ||
    !isJsonObject(capabilities) ||
    !isJsonObject(clientInfo) ||
    !isString(clientInfo.name) ||
    !isString(clientInfo.version)
  ) {
    throw new RpcFailure({
      code: RPC.invalidParams,
      message:
        'Invalid params: initialize needs params.protocolVersion (a string), params.capabilities (an object) and params.clientInfo with name and version (strings)',
    });
  }
  const served = (LEGACY_VERSIONS as readonly string[]).includes(protocolVersion);
  return {
    protocolVersion: served ? protocolVersion : LEGACY_VERSIONS[0],
    capabilities: LEGACY_CAPABILITIES,
    serverInfo: SERVER_INFO,
    instructions: MCP_INSTRUCTIONS,
  };
}

/** One request's result with its facts, or an {@link RpcFailure}. */
async function result(request: JsonRpcRequest, context: ToolCallContext): Promise<MethodResult> {
  switch (request.method) {
    case 'initialize':
      return served(initialize(request.params));
    case 'ping':
      return served({});
    case 'tools/list':
      return served({ tools: toolListFor(context.deps.writeTools, 'legacy', context.inbound.keyPolicy) });
    case 'tools/call': {
      if (isJsonObject(request.params.task)) {
        // 2025-11-25's task-augmented call: this server declares no task support (as the SDK answered).
        throw new RpcFailure({
          code: RPC.internalError,
          message: 'Server does not support task creation (required for tools/call)',
        });
      }
      const call = await callTool(request.params, context, 'legacy');
      return { value: { ...call.result }, facts: call.facts };
    }
    default:
      throw new RpcFailure({ code: RPC.methodNotFound, message: 'Method not found' });
  }
}

/** Serves one message of a legacy revision (its HTTP checks passed): 202 for anything but a request. */
export async function serveLegacy(message: JsonRpcMessage, context: ToolCallContext): Promise<McpAnswer> {
  if (message.kind !== 'request') return ACCEPTED_ANSWER;
  return answerRequest(message, () => result(message, context));
}
