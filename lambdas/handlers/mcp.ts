/**
 * @module handlers/mcp
 * `POST /mcp`: MCP's Streamable HTTP transport (stateless, JSON responses) with ERP tools for
 * agents (README, "Agents (MCP)"). `GET` and `DELETE` on the same path reach this function too and
 * are answered 405: no server-sent event stream, no session to end.
 *
 * The function routes between the runtime's two protocols (and version cache) with transports of
 * its own modes, so every ERP version is reached the same way whatever `ERP_V1_TRANSPORT` and
 * `ERP_V2_TRANSPORT` say for execute; of the runtime it needs only those, the target policy and
 * the chain's parts.
 */
import { erpAddresses } from '../core/brakes-addresses.ts';
import { derivedSealKeys, generatedSealKeys, type SealKeyRing } from '../core/confirm/keys.ts';
import type { Answer } from '../core/envelope.ts';
import type { ForwardDeps } from '../core/forward.ts';
import type { McpDeps } from '../core/mcp/erp-access.ts';
import { WRITE_TOOL_NAMES } from '../core/mcp/write-tools.ts';
import { learnedBefore } from '../core/request-facts.ts';
import { mcpAuth } from '../middleware/mcp-auth.ts';
import { toMcpInbound } from '../middleware/mcp-inbound.ts';
import type { Config } from '../platform/config.ts';
import { ROUTES, routeKey } from '../platform/routes.ts';
import { serveMcp } from '../protocol/mcp/serve.ts';
import { protectedResourceAnswer } from '../protocol/oauth/challenge.ts';
import { createOAuthResourceServer, type OAuthResourceServer } from '../protocol/oauth/resource-server.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { V1Router, type V1RoutingDeps, V2Router } from '../upstream/transport-routing.ts';
import { Chain, chainWithAuth, lambdaHandler, type ProxyHandler } from './chain.ts';
import {
  type BaseRuntime,
  createBaseRuntime,
  localMetricsStore,
  type RuntimeOverrides,
} from './runtime-base.ts';
import { createStateRuntime, limitsDeps, type StateRuntime } from './runtime-state.ts';
import { createUpstream, v1RoutingDeps } from './runtime-upstream.ts';

/** What the mcp function uses of a runtime. */
export interface McpRuntime extends BaseRuntime, StateRuntime {
  /** Both ERP protocols, the version cache and the method documentation, over one HTTP client. */
  readonly routing: V1RoutingDeps;
  readonly forward: Pick<ForwardDeps, 'policy' | 'lookup'>;
  /** OAuth for remote connectors (`MCP_OAUTH_ISSUER`); `undefined`: proxy keys only. */
  readonly oauth: OAuthResourceServer | undefined;
}

/** The function's own runtime: the base parts and both protocols over one HTTP client. */
export function createMcpRuntime(
  config: Config,
  overrides: RuntimeOverrides = {},
): McpRuntime & { readonly http: HttpClient } {
  const upstream = createUpstream(config, overrides);
  return {
    ...createBaseRuntime(config, overrides, localMetricsStore(config), WRITE_TOOL_NAMES),
    http: upstream.http,
    routing: v1RoutingDeps(upstream),
    forward: { policy: upstream.policy, lookup: upstream.lookup },
    oauth: overrides.oauth ?? createOAuthResourceServer(config),
    ...createStateRuntime(config, overrides),
  };
}

/** The tools' ERP access over the runtime's protocols: JSON-2 on 19+, execute_kw on 16-18. */
export function createMcpDeps(runtime: McpRuntime): McpDeps {
  const { config, routing } = runtime;
  return {
    config,
    policy: runtime.forward.policy,
    versions: routing.versions,
    named: new V2Router('auto', routing),
    positional: new V1Router('json2', routing),
    writeTools: config.mcpWriteTools,
    idempotency: runtime.idempotency,
    limits: limitsDeps(runtime),
    audit: runtime.audit,
    brakes: runtime.brakes,
    brakesAddresses: erpAddresses(runtime.forward.lookup),
    confirm: { keys: sealKeysOf(runtime), store: runtime.store, ttlSeconds: config.confirmTtlSeconds },
  };
}

/**
 * The keys that seal confirmation states (core/confirm/keys.ts): deployed, derived from the proxy
 * keys' secret (read only when a confirmation is asked or answered); locally, generated at start.
 */
function sealKeysOf(runtime: McpRuntime): SealKeyRing {
  if (runtime.config.proxyKeysSecretId === undefined) return generatedSealKeys();
  return derivedSealKeys(async () => (await runtime.keys.getKeys()).map((named) => named.key).join('\n'));
}

/** 405 to `GET` and `DELETE` (every MCP session sends one `GET`: it is not an error). */
function methodNotAllowed(method: string): Answer {
  const response = {
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
  return { response, facts: { outcome: 'success' } };
}

/** The routes of the protected resource metadata (public: a connector reads it before signing in). */
const METADATA_ROUTE_KEYS: ReadonlySet<string> = new Set(
  ROUTES.filter((route) => route.fn === 'mcp' && route.auth === 'public').map(routeKey),
);

export function createHandler(runtime: McpRuntime): ProxyHandler {
  const deps = createMcpDeps(runtime);
  const mcp = chainWithAuth(runtime, 'mcp', mcpAuth(runtime.keys, runtime.oauth, runtime.brakes)).handler(
    (event, known, context) => {
      const method = event.requestContext?.http?.method ?? 'POST';
      if (method !== 'POST') return Promise.resolve(methodNotAllowed(method));
      // A token caller's scopes are checked on the parsed call (protocol/mcp/tool-calls.ts).
      const token =
        known.oauth && runtime.oauth
          ? { scopes: known.oauth.scopes, resource: runtime.oauth.resource }
          : undefined;
      const inbound = toMcpInbound(event, context, known);
      if (inbound.trace === known.trace) return serveMcp(inbound, deps, token);
      // The message's `_meta.traceparent` won over the header: the log line names its trace.
      const traced = { traceId: inbound.trace?.traceId };
      return learnedBefore(traced, () => serveMcp(inbound, deps, token)).then((answer) => ({
        response: answer.response,
        facts: { ...answer.facts, ...traced },
      }));
    },
  );
  const metadata = Chain.start(runtime, 'mcp').handler(async () => ({
    response: protectedResourceAnswer(runtime.oauth),
    facts: { outcome: 'success' },
  }));
  return (event, context) =>
    METADATA_ROUTE_KEYS.has(event.routeKey ?? '') ? metadata(event, context) : mcp(event, context);
}

export const handler = lambdaHandler(createMcpRuntime, createHandler);
