/**
 * @module handlers/runtime
 * The per-process objects the handlers use, created once. A deployed function builds only what
 * its own handler uses, on its first invocation: each handler module exports a runtime factory
 * (`createExecuteV1Runtime`, …; the two execute functions' from one definition, execute.ts) composed of the base parts (runtime-base.ts) and, for the
 * execute and version functions, the upstream parts (runtime-upstream.ts), and `lambdaHandler`
 * (chain.ts) calls it; so a function's bundle holds only that code. The local server, which
 * serves every route from one process, and the tests build everything at once here with
 * `createRuntime(config, overrides)`: one logger, one metrics store, one HTTP client shared by
 * all handlers.
 */
import type { ForwardDeps } from '../core/forward.ts';
import { WRITE_TOOL_NAMES } from '../core/mcp/write-tools.ts';
import { createMetricsSource } from '../operator/metrics-source.ts';
import { type AuditStore, auditStoreKind } from '../platform/audit/audit-store.ts';
import { EmbeddedAuditStore } from '../platform/audit/audit-store-embedded.ts';
import { type Config, getConfig } from '../platform/config.ts';
import { createOAuthResourceServer } from '../protocol/oauth/resource-server.ts';
import type { HttpClient } from '../upstream/http-client.ts';
import { V1Router, V2Router } from '../upstream/transport-routing.ts';
import type { ExecuteRuntime } from './execute.ts';
import type { McpRuntime } from './mcp.ts';
import { createAuditReading, type OperatorRuntime } from './operator.ts';
import { createBaseRuntime, localMetricsStore, type RuntimeOverrides } from './runtime-base.ts';
import { createStateRuntime } from './runtime-state.ts';
import { createUpstream, routingDeps, v1RoutingDeps } from './runtime-upstream.ts';
import type { VersionRuntime } from './version.ts';

export type { BaseRuntime, RuntimeOverrides } from './runtime-base.ts';

/** Every part: what each handler's own runtime has, and the HTTP client (tests close it). */
export interface Runtime
  extends ExecuteRuntime<'v1'>,
    ExecuteRuntime<'v2'>,
    VersionRuntime,
    OperatorRuntime,
    McpRuntime {
  readonly http: HttpClient;
  readonly forward: ForwardDeps;
  /** The process's embedded audit ring (no audit table), which the local sealer seals from. */
  readonly auditRing: AuditStore | undefined;
}

export function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Runtime {
  // Locally, EMF records stay in this runtime's own store, which `/_/metrics` reads.
  const store = localMetricsStore(config);
  const upstream = createUpstream(config, overrides);
  const routing = routingDeps(upstream);
  const v1Routing = v1RoutingDeps(upstream, routing);
  // One store for every route of the process, as one table serves every function; so with the
  // audit's embedded ring, which the writers fill and `GET /_/audit` reads.
  const auditStore =
    overrides.auditStore ?? (auditStoreKind(config) === 'embedded' ? new EmbeddedAuditStore() : undefined);
  const withRing = auditStore === undefined ? overrides : { ...overrides, auditStore };
  const state = createStateRuntime(config, withRing);
  const base = createBaseRuntime(config, overrides, store, WRITE_TOOL_NAMES);
  return {
    ...base,
    metricsSource: overrides.metricsSource ?? createMetricsSource(config, store),
    oauth: overrides.oauth ?? createOAuthResourceServer({ ...config, localMcpUrl: localMcpUrl(config) }),
    ...state,
    auditReading: createAuditReading(config, withRing, base.keys),
    http: upstream.http,
    auditRing: auditStore,
    routing: v1Routing,
    forward: {
      config,
      policy: upstream.policy,
      lookup: upstream.lookup,
      v1: new V1Router(config.v1Transport, v1Routing),
      v2: new V2Router(config.v2Transport, routing),
      versions: upstream.versions,
      idempotency: state.idempotency,
    },
  };
}

/** The `/mcp` URL of a local run, the default OAuth audience there (`http://HOST:PORT/mcp`). */
function localMcpUrl(config: Config): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}/mcp`;
}

let shared: Runtime | undefined;

/** The process-wide runtime of the local server, created on first use from the environment's config. */
export function getRuntime(): Runtime {
  shared ??= createRuntime(getConfig());
  return shared;
}
