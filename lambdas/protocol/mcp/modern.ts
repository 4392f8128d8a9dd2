/**
 * @module protocol/mcp/modern
 * The stateless revision, 2026-07-28 (its basic/index, basic/versioning,
 * basic/transports/streamable-http, server/discover, server/tools and server/utilities/caching
 * pages), for one request whose HTTP checks passed:
 *
 * 1. the version the request names (`_meta`'s, else the header's) must be one this era serves:
 *    else 400 `UnsupportedProtocolVersionError` (-32022) with `supported` and `requested`;
 * 2. `_meta` must carry `io.modelcontextprotocol/protocolVersion` and `clientCapabilities`:
 *    else 400 -32602;
 * 3. the headers must repeat the body: `MCP-Protocol-Version` = `_meta`'s version, `Mcp-Method`
 *    = `method`, and for `tools/call` `Mcp-Name` = `params.name` (after decoding the
 *    `=?base64?…?=` form): else 400 `HeaderMismatch` (-32020);
 * 4. `server/discover`, `tools/list` and `tools/call` are served; any other method is 404
 *    -32601 (`ping`, `initialize`'s era and `logging/setLevel` are not this revision's);
 * 5. every result carries `resultType: "complete"` and the server's identity in
 *    `_meta["io.modelcontextprotocol/serverInfo"]`; `server/discover` and `tools/list` carry
 *    caching hints (`ttlMs`, `cacheScope`).
 *
 * Answers are JSON, never an event stream (API Gateway's HTTP APIs do not stream, and nothing
 * here sends progress or log notifications). Notifications are accepted (202) and ignored.
 */
import { MCP_INSTRUCTIONS, SERVER_INFO } from '../../core/mcp/server-info.ts';
import { isJsonObject } from '../../platform/json.ts';
import { META_KEYS, MODERN_VERSIONS, metaVersion, SUPPORTED_VERSIONS } from './eras.ts';
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
import { callTool, type ToolCallContext, toolCallParams, toolListFor } from './tool-calls.ts';

/** How long a client may keep `server/discover`'s answer: the same for every caller of a deployment. */
export const DISCOVER_TTL_MS = 3_600_000;
/**
 * How long a client may keep `tools/list`'s answer. Private: the list depends on the deployment's
 * settings and may depend on the caller's key, so a shared cache must not serve it to another key.
 */
export const TOOLS_LIST_TTL_MS = 300_000;

/** What this era declares: tools, with no list-changed notifications (there is no stream to send them on). */
const CAPABILITIES = Object.freeze({ tools: Object.freeze({}) });

const RESULT_META = Object.freeze({ [META_KEYS.serverInfo]: SERVER_INFO });

/** The protocol headers, lower-case names (what the edge passes: protocol/mcp/serve.ts). */
export type ProtocolHeaders = Readonly<Record<string, string>>;

function refuse(code: number, message: string, data?: unknown): never {
  throw new RpcFailure({ code, message, ...(data === undefined ? {} : { data }) }, 400);
}

/** A header value as the client encoded it: the `=?base64?…?=` form decoded (streamable-http, "Value Encoding"). */
export function decodedHeaderValue(value: string): string | undefined {
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (encoded === null) return value.startsWith('=?base64?') && value.endsWith('?=') ? undefined : value;
  return Buffer.from(encoded[1] as string, 'base64').toString('utf8');
}

/** Steps 1-3: the version, the required `_meta` members, the headers against the body. */
function checkRequest(request: JsonRpcRequest, headers: ProtocolHeaders): void {
  const headerVersion = headers['mcp-protocol-version'];
  const fromMeta = metaVersion(request);
  const requested = fromMeta !== undefined ? fromMeta.value : headerVersion;
  if (requested !== undefined && !(MODERN_VERSIONS as readonly unknown[]).includes(requested)) {
    refuse(RPC.unsupportedProtocolVersion, 'Unsupported protocol version', {
      supported: SUPPORTED_VERSIONS,
      requested,
    });
  }
  const meta = request.params._meta;
  const missing = [META_KEYS.protocolVersion, META_KEYS.clientCapabilities].filter(
    (key) => !isJsonObject(meta) || meta[key] === undefined,
  );
  if (missing.length > 0) {
    refuse(
      RPC.invalidParams,
      `Invalid params: a ${MODERN_VERSIONS[0]} request carries params._meta["${missing.join('"] and params._meta["')}"]`,
    );
  }
  if (!isJsonObject((meta as JsonObject)[META_KEYS.clientCapabilities])) {
    refuse(
      RPC.invalidParams,
      `Invalid params: params._meta["${META_KEYS.clientCapabilities}"] must be an object`,
    );
  }
  matchHeader(headers, 'MCP-Protocol-Version', requested as string);
  matchHeader(headers, 'Mcp-Method', request.method);
  if (request.method === 'tools/call') {
    let name: string;
    try {
      ({ name } = toolCallParams(request.params));
    } catch (error) {
      // A malformed call is a malformed request: 400 in this revision, as a missing _meta member.
      if (error instanceof RpcFailure) refuse(error.error.code, error.error.message);
      throw error;
    }
    matchHeader(headers, 'Mcp-Name', name, decodedHeaderValue);
  }
}

/** A header that must repeat a body value: -32020 when it is missing or says something else. */
function matchHeader(
  headers: ProtocolHeaders,
  name: string,
  bodyValue: string,
  decode: (value: string) => string | undefined = (value) => value,
): void {
  const value = headers[name.toLowerCase()];
  if (value === undefined) {
    refuse(
      RPC.headerMismatch,
      `Header mismatch: the ${name} header is missing; it must repeat the body's value '${bodyValue}'`,
    );
  }
  const decoded = decode(value);
  if (decoded === undefined) {
    refuse(
      RPC.headerMismatch,
      `Header mismatch: the ${name} header value is not valid base64 in its =?base64?…?= form`,
    );
  }
  if (decoded !== bodyValue) {
    refuse(
      RPC.headerMismatch,
      `Header mismatch: ${name} header value '${decoded}' does not match body value '${bodyValue}'`,
    );
  }
}

/** Step 4: the result of a checked request, with its facts. */
async function result(request: JsonRpcRequest, context: ToolCallContext): Promise<MethodResult> {
  switch (request.method) {
    case 'server/discover':
      return served({
        supportedVersions: SUPPORTED_VERSIONS,
        capabilities: CAPABILITIES,
        instructions: MCP_INSTRUCTIONS,
        ttlMs: DISCOVER_TTL_MS,
        cacheScope: 'public',
      });
    case 'tools/list':
      return served({
        tools: toolListFor(context.deps.writeTools, 'modern', context.inbound.keyPolicy),
        ttlMs: TOOLS_LIST_TTL_MS,
        cacheScope: 'private',
      });
    case 'tools/call': {
      const call = await callTool(request.params, context, 'modern');
      return { value: { ...call.result }, facts: call.facts };
    }
    default:
      throw new RpcFailure(
        { code: RPC.methodNotFound, message: `Method not found: ${request.method.slice(0, 64)}` },
        404,
      );
  }
}

/** Serves one message of the 2026-07-28 revision (its HTTP checks passed). */
export async function serveModern(
  message: JsonRpcMessage,
  headers: ProtocolHeaders,
  context: ToolCallContext,
): Promise<McpAnswer> {
  if (message.kind !== 'request') return ACCEPTED_ANSWER;
  return answerRequest(
    message,
    async () => {
      checkRequest(message, headers);
      return result(message, context);
    },
    (value) => ({ resultType: 'complete', ...value, _meta: RESULT_META }),
  );
}
