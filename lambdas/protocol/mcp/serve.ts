/**
 * @module protocol/mcp/serve
 * `POST /mcp`, once the caller is authenticated and licensed and the body is read: MCP's
 * Streamable HTTP transport, stateless, answering in JSON (never an event stream: API Gateway's
 * HTTP APIs do not stream), for both eras of the protocol on one endpoint (README, "Agents
 * (MCP)"; docs/design.md, "Agents: POST /mcp"):
 *
 * 1. one JSON-RPC message per request (a batch, a body that is not JSON or nests too deep is the
 *    proxy's -32600/-32700, as on every route);
 * 2. header values a web `Headers` could not hold (NUL, CR, LF, above U+00FF): 400 -32600 naming
 *    the header;
 * 3. an `Origin` header that is not one of `MCP_ALLOWED_ORIGINS`: 403 (a browser page of another
 *    site, or a DNS-rebinding one; a request without `Origin` is no browser's and passes);
 * 4. `Accept` naming both `application/json` and `text/event-stream` (406), a JSON
 *    `Content-Type` by its media type (415), a JSON-RPC 2.0 message (400 -32700), with the
 *    statuses, codes and messages of the SDK transport this replaces;
 * 5. the era (protocol/mcp/eras.ts): the 2026-07-28 revision (protocol/mcp/modern.ts) or the
 *    revisions that open with `initialize` (protocol/mcp/legacy.ts).
 *
 * The protocol layer sees only the protocol headers (never a key); the tools reach the ERP
 * through core/mcp/, which gets plain values (the request's `McpInbound`, built at the edge).
 * Every step returns its HTTP answer with how the request ended (`McpAnswer`); the answer's
 * facts are those values, never read back from the answer's text.
 */
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Answer } from '../../core/envelope.ts';
import type { McpInbound } from '../../core/mcp/connection.ts';
import type { McpDeps } from '../../core/mcp/erp-access.ts';
import { learnedBefore, type RequestFacts } from '../../core/request-facts.ts';
import { InvalidRequestError, ParseError } from '../../platform/errors.ts';
import { isJsonObject, MAX_JSON_DEPTH } from '../../platform/json.ts';
import { eraOf } from './eras.ts';
import { serveLegacy } from './legacy.ts';
import { jsonRpcMessage, type McpAnswer, RPC, refusal } from './messages.ts';
import { serveModern } from './modern.ts';
import type { ToolCallContext } from './tool-calls.ts';

/** The request headers the protocol layer reads (lower-case names); it sees no other. */
export const PROTOCOL_HEADERS = Object.freeze([
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'origin',
] as const);

/** HTTP whitespace, which `Headers` trims from both ends of a value. */
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * Header values as a web `Headers` holds them (surrounding whitespace trimmed), or the name of
 * the first header whose value it would refuse (a character above U+00FF, which is no byte, or
 * NUL, CR or LF).
 */
function normalizedHeaders(
  headers: Readonly<Record<string, string>>,
): { readonly ok: Record<string, string> } | { readonly refused: string } {
  const normalized: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const trimmed = value.replace(HTTP_WHITESPACE, '');
    if (/[\u0100-\uffff]/.test(value) || /[\0\r\n]/.test(trimmed)) return { refused: name.toLowerCase() };
    normalized[name.toLowerCase()] = trimmed;
  }
  return { ok: normalized };
}

/** Whether `origin` (an `Origin` header) is one the deployment allows; compared as browsers send it, case aside. */
export function isAllowedOrigin(origin: string, allowed: readonly string[]): boolean {
  const given = origin.toLowerCase();
  return allowed.some((entry) => entry.toLowerCase() === given);
}

/** Steps 2-5 for one parsed body. */
async function answer(context: ToolCallContext): Promise<McpAnswer> {
  const { inbound, deps } = context;
  const headers = normalizedHeaders(inbound.protocolHeaders);
  if ('refused' in headers) {
    return refusal(400, null, {
      code: RPC.invalidRequest,
      message: `Invalid Request: the ${headers.refused} header holds a character HTTP headers cannot carry (NUL, CR, LF, or one above U+00FF)`,
    });
  }
  const { ok } = headers;
  if (ok.origin !== undefined && !isAllowedOrigin(ok.origin, deps.config.mcpAllowedOrigins)) {
    return refusal(403, null, {
      code: RPC.invalidRequest,
      message:
        'Forbidden: this server does not serve pages of the origin in the Origin header (an operator allows an origin with MCP_ALLOWED_ORIGINS)',
    });
  }
  const accept = ok.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return refusal(406, null, {
      code: -32000,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
    });
  }
  if (!isJsonContentType(ok['content-type'] ?? null)) {
    return refusal(415, null, {
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    });
  }
  const message = inbound.body.ok ? jsonRpcMessage(inbound.body.value) : undefined;
  if (message === undefined) {
    return refusal(400, null, { code: RPC.parseError, message: 'Parse error: Invalid JSON-RPC message' });
  }
  return eraOf(message, ok['mcp-protocol-version']) === 'modern'
    ? serveModern(message, ok, context)
    : serveLegacy(message, context);
}

/**
 * Serves one MCP message: the HTTP answer with the facts of the request log line and metrics (the
 * MCP method, and what the answer's step returned: the tool, its outcome and code, its ERP call).
 * `token` is an OAuth caller's grant (absent for a proxy key's caller).
 */
export async function serveMcp(
  inbound: McpInbound,
  deps: McpDeps,
  token?: ToolCallContext['token'],
): Promise<Answer> {
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
  const method: RequestFacts =
    isJsonObject(body.value) && typeof body.value.method === 'string' ? { mcpMethod: body.value.method } : {};
  const { http, facts } = await learnedBefore(method, () => answer({ inbound, deps, token }));
  return {
    response: { statusCode: http.status, headers: { ...http.headers }, body: http.body },
    facts: { ...method, ...facts },
  };
}
