/**
 * @module handlers/mcp
 * `POST /mcp`: MCP's Streamable HTTP transport (stateless, JSON responses) with ERP tools for
 * agents (README, "Agents (MCP)"). `GET` and `DELETE` on the same path reach this function too and
 * are answered 405: no server-sent event stream, no session to end.
 *
 * The function builds its own transports over the runtime's HTTP client, target policy and
 * version cache, so it needs only those of the runtime (and the chain's parts): every ERP version
 * is reached the same way whatever `ERP_V1_TRANSPORT` and `ERP_V2_TRANSPORT` say for execute.
 */
import type { LambdaResponse } from '../core/envelope.ts';
import type { ForwardDeps } from '../core/forward.ts';
import type { McpDeps } from '../core/mcp/erp-access.ts';
import { serveMcp } from '../core/mcp/serve.ts';
import type { RequestState } from '../core/request-state.ts';
import { toMcpInbound } from '../middleware/mcp-inbound.ts';
import { Json2Transport } from '../upstream/json2-transport.ts';
import { JsonRpcTransport } from '../upstream/jsonrpc-transport.ts';
import { MethodDocClient } from '../upstream/method-docs.ts';
import { type RoutingDeps, V1Transport, V2Transport } from '../upstream/transport-routing.ts';
import { type ChainRuntime, executeChain, lambdaHandler } from './chain.ts';
import type { Runtime } from './runtime.ts';

/** What the mcp function uses of a runtime. */
export interface McpRuntime extends ChainRuntime, Pick<Runtime, 'config' | 'http'> {
  readonly forward: Pick<ForwardDeps, 'policy' | 'versions'>;
}

/** The tools' ERP access over the runtime's client: JSON-2 on 19+, execute_kw on 16-18. */
export function createMcpDeps(runtime: McpRuntime): McpDeps {
  const { http, config } = runtime;
  const { policy, versions } = runtime.forward;
  const routing: RoutingDeps = {
    jsonrpc: new JsonRpcTransport(http),
    json2: new Json2Transport(http),
    versions,
    docs: new MethodDocClient(http),
  };
  return {
    config,
    policy,
    versions,
    named: new V2Transport('auto', routing),
    positional: new V1Transport('json2', routing),
    writeTools: config.mcpWriteTools,
  };
}

/** 405 to `GET` and `DELETE` (every MCP session sends one `GET`: it is not an error). */
function methodNotAllowed(state: RequestState, method: string): LambdaResponse {
  state.outcome = 'success';
  return {
    statusCode: 405,
    headers: { 'content-type': 'application/json; charset=utf-8', allow: 'POST' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: `Method not allowed: ${method.slice(0, 16)} /mcp. This server is stateless and answers in JSON: POST only (no event stream, no session to end).`,
      },
    }),
  };
}

export function createHandler(runtime: McpRuntime) {
  const deps = createMcpDeps(runtime);
  return executeChain(runtime, 'mcp').handler((event, context) => {
    const method = event.requestContext?.http?.method ?? 'POST';
    if (method !== 'POST') return Promise.resolve(methodNotAllowed(context.proxy, method));
    return serveMcp(toMcpInbound(event, context), context.proxy, deps);
  });
}

export const handler = lambdaHandler(createHandler);
