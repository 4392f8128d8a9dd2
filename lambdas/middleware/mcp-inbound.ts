/**
 * @module middleware/mcp-inbound
 * The edge of `POST /mcp`: the only place its API Gateway event is read for the core. It takes
 * the headers of the MCP protocol (for protocol/mcp/, which sees no other: no key ever reaches
 * it), the ERP connection (the `x-erp-*` headers of a proxy-key caller, or the identity-map
 * entry of a signed-in person, as a typed value), who calls and the proxy key presented (an ERP
 * key equal to it is refused), both as `mcpAuth` read them, the time-budget inputs and the body
 * `jsonBody` read, and hands the core an {@link McpInbound}. A request's `params._meta.traceparent`
 * (MCP 2026-07-28) wins over the `traceparent` header.
 */
import type { InboundBody } from '../core/inbound-call.ts';
import type { McpInbound } from '../core/mcp/connection.ts';
import type { Observed, ProxyContext } from '../core/request-facts.ts';
import { parseTraceparent, type TraceContext } from '../platform/trace-context.ts';
import { PROTOCOL_HEADERS } from '../protocol/mcp/serve.ts';
import { toInboundCall } from './inbound-edge.ts';
import type { BodyRead } from './json-body.ts';
import type { McpAuthenticated } from './mcp-auth.ts';
import type { ProxyEvent } from './types.ts';

/** The trace of a message's `params._meta` (`traceparent`, `tracestate`); `undefined`: none, or not valid. */
export function metaTrace(body: InboundBody): TraceContext | undefined {
  if (!body.ok || body.tooDeep) return undefined;
  const meta: unknown = (body.value as { params?: { _meta?: unknown } } | null)?.params?._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  return parseTraceparent(traceparent, tracestate);
}

/** Builds the core's view of one `POST /mcp`. API Gateway (and the local server) lower-case header names. */
export function toMcpInbound(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & McpAuthenticated & Partial<Observed>,
): McpInbound {
  const headers = event.headers ?? {};
  const protocolHeaders: Record<string, string> = {};
  for (const name of PROTOCOL_HEADERS) {
    const value = headers[name];
    if (value !== undefined) protocolHeaders[name] = value;
  }
  return {
    ...toInboundCall(event, context, known),
    trace: metaTrace(known.body) ?? known.trace,
    identity: known.callerIdentity,
    // A tool's answer is cut to a few dozen KB whatever the ERP sends, so a compressed response
    // does not earn the larger read an execute call gets (core/forward.ts); the response itself is
    // still compressed when the client accepts it (the envelope middleware).
    responseEncoding: undefined,
    presentedProxyKey: known.presentedProxyKey,
    protocolHeaders,
    // A token caller's ERP connection is the identity map's; x-erp-* headers are ignored then.
    erp: known.oauth
      ? { from: 'identity', identity: known.oauth.identity.name, connection: known.oauth.identity.erp }
      : {
          from: 'headers',
          headers: {
            url: headers['x-erp-url'],
            db: headers['x-erp-db'],
            apiKey: headers['x-erp-api-key'],
            userId: headers['x-erp-user-id'],
          },
        },
  };
}
