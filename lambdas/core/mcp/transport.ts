/**
 * @module core/mcp/transport
 * The SDK's `Transport` for one `POST /mcp`: MCP's Streamable HTTP in stateless mode with JSON
 * responses, one JSON-RPC message in, at most one out. It answers exactly as the SDK's
 * `WebStandardStreamableHTTPServerTransport` does in that mode (`sessionIdGenerator: undefined`,
 * `enableJsonResponse: true`, a parsed body given), rule by rule from its `handlePostRequest`
 * and `send` (@modelcontextprotocol/sdk 1.32.2, dist/esm/server/webStandardStreamableHttp.js):
 *
 * 1. `Accept` must name both `application/json` and `text/event-stream` (a substring check, as
 *    the SDK's): else 406, -32000;
 * 2. `Content-Type` must be JSON by its parsed media type (the SDK's own `isJsonContentType`):
 *    else 415, -32000;
 * 3. a batch of more than the SDK's `MAX_BATCH_SIZE`: 400, -32600; a message (or a batch member)
 *    that is not JSON-RPC by the SDK's `JSONRPCMessageSchema`: 400, -32700;
 * 4. `initialize` in a batch of more than one: 400, -32600;
 * 5. any other message: an `MCP-Protocol-Version` header, when present, must be one of the SDK's
 *    `SUPPORTED_PROTOCOL_VERSIONS`: else 400, -32000 naming them;
 * 6. notifications and responses only: 202 with no body (and no content type);
 * 7. requests: 200, `Content-Type: application/json`, the response (or the batch's responses);
 * 8. anything thrown on the way: 400, -32700 "Parse error" with the error as `data`.
 *
 * Error bodies are `{"jsonrpc":"2.0","error":{"code","message"[,"data"]},"id":null}` with
 * `Content-Type: application/json`. Header values are read as the `Headers` of a web `Request`
 * would hold them (surrounding whitespace trimmed), and one a `Request` refuses throws a
 * `TypeError` as building it did. test/unit/mcp-transport.test.ts compares its
 * answers with the SDK transport's, case by case.
 *
 * Why not the SDK's: it speaks web `Request`/`Response`, whose first use loads Node's fetch
 * implementation (undici): about 25 ms of the mcp function's first invocation, for a body the
 * proxy has already read and parsed and an answer it turns back into a Lambda response.
 */
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/** The SDK's `MAX_BATCH_SIZE` (server/requestBody.js), not exported by its package. */
export const MAX_BATCH_SIZE = 100;

/** An HTTP answer: status, headers (lower-case names), body. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What the SDK transport hands its server with each message: the request's headers and URL. */
const REQUEST_URL = 'http://erp-proxy.invalid/mcp';

/** HTTP whitespace, which `Headers` trims from both ends of a value. */
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function jsonError(status: number, code: number, message: string, data?: unknown): HttpAnswer {
  const error: { code: number; message: string; data?: unknown } = { code, message };
  if (data !== undefined) error.data = data;
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', error, id: null }),
  };
}

/**
 * Header values as a web `Headers` holds them, or the name of the first header whose value it
 * would refuse (a character above U+00FF, which is no byte, or NUL, CR or LF).
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

/**
 * One message in, its answer out; connect a server to it (`server.connect(transport)`), then call
 * {@link handle} once. Stateless: a transport serves one request, as the SDK's does.
 */
export class StatelessJsonTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** No sessions: always undefined. */
  readonly sessionId: string | undefined = undefined;

  #started = false;
  #handled = false;
  #closed = false;
  /** The ids of the request(s) being answered, and the answers so far. */
  readonly #pending = new Map<RequestId, JSONRPCMessage | undefined>();
  #resolve: ((answer: HttpAnswer) => void) | undefined;

  async start(): Promise<void> {
    if (this.#started) throw new Error('Transport already started');
    this.#started = true;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.clear();
    this.onclose?.();
  }

  /** The request's answer; `headers` are the request's (lower-case names), `body` its parsed JSON. */
  async handle(headers: Readonly<Record<string, string>>, body: unknown): Promise<HttpAnswer> {
    if (this.#closed) return jsonError(404, -32001, 'Session not found');
    if (this.#handled) {
      throw new Error(
        'Stateless transport cannot be reused across requests. Create a new transport per request.',
      );
    }
    this.#handled = true;
    // Before the SDK transport's handling starts: where `new Request(...)` would have thrown (a
    // 500 -32603 then); a request's bad header is the caller's error, answered as one.
    const requestHeaders = normalizedHeaders(headers);
    if ('refused' in requestHeaders) {
      return this.#refuse(
        400,
        -32600,
        `Invalid Request: the ${requestHeaders.refused} header holds a character HTTP headers cannot carry (NUL, CR, LF, or one above U+00FF)`,
      );
    }
    try {
      return await this.#handlePost(requestHeaders.ok, body);
    } catch (error) {
      this.onerror?.(error as Error);
      return jsonError(400, -32700, 'Parse error', String(error));
    }
  }

  #refuse(status: number, code: number, message: string): HttpAnswer {
    this.onerror?.(new Error(message));
    return jsonError(status, code, message);
  }

  async #handlePost(headers: Record<string, string>, body: unknown): Promise<HttpAnswer> {
    const accept = headers.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return this.#refuse(
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    }
    if (!isJsonContentType(headers['content-type'] ?? null)) {
      return this.#refuse(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const requestInfo = { headers, url: new URL(REQUEST_URL) };
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return this.#refuse(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    let messages: JSONRPCMessage[];
    try {
      messages = Array.isArray(body)
        ? body.map((message) => JSONRPCMessageSchema.parse(message))
        : [JSONRPCMessageSchema.parse(body)];
    } catch {
      return this.#refuse(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (this.#closed) return jsonError(404, -32001, 'Session not found');
    const initializing = messages.some(isInitializeRequest);
    if (initializing) {
      if (messages.length > 1) {
        return this.#refuse(400, -32600, 'Invalid Request: Only one initialization request is allowed');
      }
    } else {
      const version = headers['mcp-protocol-version'];
      if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return this.#refuse(
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        );
      }
    }
    if (!messages.some(isJSONRPCRequest)) {
      for (const message of messages) this.onmessage?.(message, { requestInfo });
      return { status: 202, headers: {}, body: '' };
    }
    return new Promise<HttpAnswer>((resolve) => {
      this.#resolve = resolve;
      for (const message of messages) {
        if (isJSONRPCRequest(message)) this.#pending.set(message.id, undefined);
      }
      for (const message of messages) this.onmessage?.(message, { requestInfo });
    });
  }

  /**
   * The server's messages: a response is kept until every request of the message has one, then
   * answered; anything else (a notification, a request to the client) has no stream to go to in
   * this mode and is dropped, as the SDK transport drops it.
   */
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isResponse = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const requestId = isResponse ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      if (isResponse) {
        throw new Error(
          'Cannot send a response on a standalone SSE stream unless resuming a previous client request',
        );
      }
      return;
    }
    if (!this.#pending.has(requestId) || this.#resolve === undefined) {
      throw new Error(`No connection established for request ID: ${String(requestId)}`);
    }
    if (!isResponse) return;
    this.#pending.set(requestId, message);
    const responses = [...this.#pending.values()];
    if (responses.some((response) => response === undefined)) return;
    this.#pending.clear();
    this.#resolve({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(responses.length === 1 ? responses[0] : responses),
    });
  }
}
