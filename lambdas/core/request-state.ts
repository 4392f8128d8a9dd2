/**
 * @module core/request-state
 * What one request learns on its way through the Middy chain. Middlewares fill it in; the
 * envelope middleware, the request log and the metrics read it. Never holds a secret, `params`,
 * `kwargs` or a result.
 */
import type { Context } from 'aws-lambda';
import type { WithAnswerLease } from '../platform/answer-budget.ts';
import type { ApiName, McpToolName, Outcome, UpstreamProtocol } from '../platform/names.ts';
import type { InboundBody } from './inbound-call.ts';
import type { Encoding } from './response-encoding.ts';

export type { ApiName, Outcome };

export interface RequestState {
  readonly api: ApiName;
  /** `performance.now()` when the chain started. */
  readonly startedAt: number;
  /** The envelope `id` to echo; `null` when the body could not be read. */
  envelopeId: string | null;
  /** Name of the proxy key that authenticated the caller. */
  callerKeyName?: string;
  /** v1 action, or v2 method. */
  action?: string;
  model?: string;
  erpHost?: string;
  erpDb?: string;
  upstreamStatus?: number;
  /** Milliseconds spent waiting on the upstream (sum over calls). */
  upstreamMs?: number;
  /** The ERP protocol that served the call (`/jsonrpc` or JSON-2). */
  upstreamProtocol?: UpstreamProtocol;
  outcome?: Outcome;
  errorCode?: number;
  /** Size of the response body sent to the client. */
  responseBytes?: number;
  /** `POST /mcp`: the JSON-RPC method of the MCP message (`initialize`, `tools/list`, `tools/call`...). */
  mcpMethod?: string;
  /** `POST /mcp`: the tool a `tools/call` ran (one of the known tools). */
  tool?: McpToolName;
  /**
   * A bug caught where the answer must still be a normal one (an MCP tool's result, with
   * `isError: true` and -32603): the request log line shows its stack, as for a thrown one.
   */
  internalError?: unknown;
}

/**
 * The Lambda context as the proxy's handlers see it: the request's state, and on the local
 * server the invocation's answer lease.
 */
export interface ProxyContext extends Context, WithAnswerLease {
  proxy: RequestState;
  /** The request body, once `jsonBody` read it (after the caller was authenticated). */
  body?: InboundBody;
  /** The response encoding, negotiated once from `Accept-Encoding` (`responseEncodingOf`). */
  responseEncoding?: Encoding;
}
