/**
 * @module handlers/runtime-upstream
 * What the execute and version functions add to the base runtime (runtime-base.ts): the target
 * policy, the HTTP client (its connections outlive one invocation), the version client, and the
 * transports' dependencies. The ERP's method documentation, read only for a v1 `call_method`
 * translated to JSON-2, is loaded on its first use.
 */
import type { Config } from '../platform/config.ts';
import { createHttpClient, type HttpClient } from '../upstream/http-client.ts';
import { Json2Transport } from '../upstream/json2-transport.ts';
import { JsonRpcTransport } from '../upstream/jsonrpc-transport.ts';
import type { MethodDocs } from '../upstream/method-docs.ts';
import {
  type CompiledTargetPolicy,
  compileTargetPolicy,
  createPolicyLookup,
  type PolicyLookup,
} from '../upstream/target-policy.ts';
import type { RoutingDeps, V1RoutingDeps } from '../upstream/transport-routing.ts';
import { VersionClient } from '../upstream/version-client.ts';
import { type BaseRuntime, createBaseRuntime, type RuntimeOverrides } from './runtime-base.ts';

export interface Upstream {
  readonly policy: CompiledTargetPolicy;
  /** The policy's connect-time lookup the HTTP client connects with (the limits resolve with it too). */
  readonly lookup: PolicyLookup;
  readonly http: HttpClient;
  readonly versions: VersionClient;
}

export function createUpstream(config: Config, overrides: RuntimeOverrides = {}): Upstream {
  const policy = compileTargetPolicy({
    allowedTargets: config.allowedTargets,
    allowedDatabases: config.allowedDatabases,
  });
  const lookup = createPolicyLookup(policy, overrides.dnsLookup);
  const http = createHttpClient({
    ...overrides.http,
    lookup,
    // A Lambda instance serves one invocation at a time: one kept-alive socket per ERP is all it
    // can use.
    connectionsPerOrigin: config.runtime === 'lambda' ? 1 : 16,
    // The request deadline answers the client and ends the attempt; this caps a connection
    // attempt on its own, whatever the deadline.
    connectTimeoutMs: Math.min(10, config.maxTimeoutSeconds) * 1000,
  });
  return { policy, lookup, http, versions: new VersionClient(http) };
}

/**
 * The runtime of a function that calls ERPs: the base parts, the HTTP client (tests close it),
 * and what its endpoint forwards with: the config and the target policy, and what `endpoint`
 * builds from the upstream (its transport, or the version client).
 */
export function createForwardingRuntime<T extends object>(
  config: Config,
  overrides: RuntimeOverrides,
  endpoint: (upstream: Upstream) => T,
): BaseRuntime & {
  readonly http: HttpClient;
  readonly forward: {
    readonly config: Config;
    readonly policy: CompiledTargetPolicy;
    readonly lookup: PolicyLookup;
  } & T;
} {
  const upstream = createUpstream(config, overrides);
  return {
    ...createBaseRuntime(config, overrides),
    http: upstream.http,
    forward: { config, policy: upstream.policy, lookup: upstream.lookup, ...endpoint(upstream) },
  };
}

/** Both protocols over the upstream's client: what routes a v2 call. */
export function routingDeps(upstream: Upstream): RoutingDeps {
  return {
    jsonrpc: new JsonRpcTransport(upstream.http),
    json2: new Json2Transport(upstream.http),
    versions: upstream.versions,
  };
}

/** What routes a v1 call: both protocols, and the method documentation, loaded on first use. */
export function v1RoutingDeps(
  upstream: Upstream,
  routing: RoutingDeps = routingDeps(upstream),
): V1RoutingDeps {
  return { ...routing, docs: lazyMethodDocs(upstream.http) };
}

/**
 * The method-docs client, imported and built on the first `call_method` translated to JSON-2:
 * most processes never make one (`ERP_V1_TRANSPORT=auto` sends v1 calls to ERP 16-21 over
 * `/jsonrpc`, and the standard actions need no documentation).
 */
function lazyMethodDocs(http: HttpClient): MethodDocs {
  let client: Promise<MethodDocs> | undefined;
  return {
    async lookup(target, method, context) {
      client ??= import('../upstream/method-docs.ts').then(
        ({ MethodDocClient }) => new MethodDocClient(http),
      );
      return (await client).lookup(target, method, context);
    },
  };
}
