/**
 * @module protocol/mcp/messages
 * JSON-RPC 2.0 as MCP uses it, without a schema library: what a message is (request,
 * notification, response), the answers a server sends, and the HTTP answer that carries them.
 * The shapes are the ones the MCP SDK's `JSONRPCMessageSchema` accepts (a request or a
 * notification has no other top-level member; an id is a string or an integer; `params` and
 * `params._meta` are objects), checked by hand so that no schema is built at a cold start
 * (docs/design.md, "Agents: POST /mcp").
 */
import { factsOf, type RequestFacts } from '../../core/request-facts.ts';
import { isJsonObject } from '../../platform/json.ts';

/** A JSON-RPC id: a string or an integer (never null: MCP forbids it). */
export type RequestId = string | number;

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** A request: it expects an answer. */
export interface JsonRpcRequest {
  readonly kind: 'request';
  readonly id: RequestId;
  readonly method: string;
  /** `params`, or an empty object when there are none. */
  readonly params: JsonObject;
}

/** A notification: no answer. */
export interface JsonRpcNotification {
  readonly kind: 'notification';
  readonly method: string;
}

/** A response the client sent (a result or an error): a server of this proxy never asks, so none is awaited. */
export interface JsonRpcResponse {
  readonly kind: 'response';
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** An HTTP answer: status, headers (lower-case names), body. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** JSON-RPC's and MCP's error codes, by name. */
export const RPC = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP 2026-07-28: the HTTP headers do not match the body, or a required one is missing. */
  headerMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability it did not declare. */
  missingClientCapability: -32021,
  /** MCP 2026-07-28: the requested protocol version is not one this server implements. */
  unsupportedProtocolVersion: -32022,
});

const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_MEMBERS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_MEMBERS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_MEMBERS = new Set(['jsonrpc', 'id', 'error']);

function hasOnly(value: JsonObject, members: ReadonlySet<string>): boolean {
  return Object.keys(value).every((key) => members.has(key));
}

/** An id, a progress token: a string or a safe integer (zod's `int()`, as the SDK's schema). */
function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** The 2025-11-25 `_meta` key relating a message to a task. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A `_meta` as the SDK takes it: absent, or an object whose progress token and related task, if any, fit. */
function validMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isJsonObject(meta)) return false;
  const token = meta.progressToken;
  if (token !== undefined && !isRequestId(token)) return false;
  const task = meta[RELATED_TASK];
  return task === undefined || (isJsonObject(task) && typeof task.taskId === 'string');
}

/** `params` as JSON-RPC and MCP allow them: absent, or an object whose `_meta`, if any, fits. */
function validParams(params: unknown): params is JsonObject | undefined {
  if (params === undefined) return true;
  return isJsonObject(params) && validMeta(params._meta);
}

/** The message `value` is, or `undefined` when it is not a JSON-RPC 2.0 message. */
export function jsonRpcMessage(value: unknown): JsonRpcMessage | undefined {
  if (!isJsonObject(value) || value.jsonrpc !== '2.0') return undefined;
  if (typeof value.method === 'string') {
    if (!validParams(value.params)) return undefined;
    const params = (value.params as JsonObject | undefined) ?? {};
    if ('id' in value) {
      if (!hasOnly(value, REQUEST_MEMBERS) || !isRequestId(value.id)) return undefined;
      return { kind: 'request', id: value.id, method: value.method, params };
    }
    return hasOnly(value, NOTIFICATION_MEMBERS) ? { kind: 'notification', method: value.method } : undefined;
  }
  if ('result' in value) {
    return hasOnly(value, RESULT_MEMBERS) &&
      isRequestId(value.id) &&
      isJsonObject(value.result) &&
      validMeta(value.result._meta)
      ? { kind: 'response' }
      : undefined;
  }
  if ('error' in value) {
    const { error } = value;
    const valid =
      hasOnly(value, ERROR_MEMBERS) &&
      (value.id === undefined || isRequestId(value.id)) &&
      isJsonObject(error) &&
      typeof error.code === 'number' &&
      Number.isSafeInteger(error.code) &&
      typeof error.message === 'string';
    return valid ? { kind: 'response' } : undefined;
  }
  return undefined;
}

/** An error as JSON-RPC carries it. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** An HTTP answer with a JSON body. */
export function jsonAnswer(status: number, body: unknown): HttpAnswer {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** An error response: to request `id`, or with `id: null` when no request could be read. */
function errorAnswer(status: number, id: RequestId | null, error: RpcError): HttpAnswer {
  const body: RpcError = { code: error.code, message: error.message };
  if (error.data !== undefined) (body as { data?: unknown }).data = error.data;
  return id === null
    ? jsonAnswer(status, { jsonrpc: '2.0', error: body, id: null })
    : jsonAnswer(status, { jsonrpc: '2.0', id, error: body });
}

/** A result response (HTTP 200). */
function resultAnswer(id: RequestId, result: JsonObject): HttpAnswer {
  return jsonAnswer(200, { result, jsonrpc: '2.0', id });
}

/** What a notification or a client's response gets: 202, no body. */
const ACCEPTED: HttpAnswer = Object.freeze({ status: 202, headers: Object.freeze({}), body: '' });

/**
 * An HTTP answer and how the request ended, decided together where the answer is built (the
 * outcome and code of the log line and metrics), so nothing reads the answer back.
 */
export interface McpAnswer {
  readonly http: HttpAnswer;
  readonly facts: RequestFacts;
}

/** How a request ended that was answered as asked (a result, or 202). */
const SERVED: RequestFacts = Object.freeze({ outcome: 'success' });

/** 202 for a notification or a client's response. */
export const ACCEPTED_ANSWER: McpAnswer = Object.freeze({ http: ACCEPTED, facts: SERVED });

/** A JSON-RPC error answer, counted as the proxy's refusal under its code. */
export function refusal(status: number, id: RequestId | null, error: RpcError): McpAnswer {
  return {
    http: errorAnswer(status, id, error),
    facts: { outcome: 'proxy_error', errorCode: error.code },
  };
}

/** What a method of an era returns: its result, and the facts of how the request ended. */
export interface MethodResult {
  readonly value: JsonObject;
  readonly facts: RequestFacts;
}

/** A method's result for a request that ended as asked. */
export function served(value: JsonObject): MethodResult {
  return { value, facts: SERVED };
}

/**
 * Serves one request with `method` (its result and facts, or an {@link RpcFailure} that becomes its
 * JSON-RPC error); `wrap` makes the era's result object of the method's.
 */
export async function answerRequest(
  request: JsonRpcRequest,
  method: () => Promise<MethodResult>,
  wrap: (value: JsonObject) => JsonObject = (value) => value,
): Promise<McpAnswer> {
  try {
    const { value, facts } = await method();
    return { http: resultAnswer(request.id, wrap(value)), facts };
  } catch (error) {
    if (!(error instanceof RpcFailure)) throw error;
    const refused = refusal(error.status, request.id, error.error);
    // What was learned before the refusal (a tool, a confirmation's outcome) stays in the log line.
    return { http: refused.http, facts: { ...factsOf(error), ...refused.facts } };
  }
}

/** An error a method's handler throws: its answer is a JSON-RPC error with this HTTP status. */
export class RpcFailure extends Error {
  constructor(
    readonly error: RpcError,
    readonly status = 200,
  ) {
    super(error.message);
    this.name = 'RpcFailure';
  }
}
