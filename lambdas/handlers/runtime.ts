/**
 * @module handlers/runtime
 * The per-process objects every handler shares, created once at cold start: config, logger,
 * metrics, secret sources, the HTTP client (its connections outlive one invocation) and the
 * transports. Tests and the local server may build their own with `createRuntime(config)`.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { ForwardDeps } from '../core/forward.ts';
import { LocalMetricsStore } from '../operator/local-metrics-store.ts';
import {
  createCloudWatchMetricsSource,
  createLocalMetricsSource,
  type MetricsSource,
} from '../operator/metrics-source.ts';
import { type Config, getConfig } from '../platform/config.ts';
import { withLicenseWarning } from '../platform/license-notice.ts';
import { createLogger } from '../platform/logger.ts';
import { createMetrics } from '../platform/metrics/powertools.ts';
import {
  createLicenseSource,
  createProxyKeySource,
  type LicenseSource,
  type ProxyKeySource,
} from '../platform/secrets.ts';
import { createHttpClient, type HttpClient, type HttpClientOptions } from '../upstream/http-client.ts';
import { Json2Transport } from '../upstream/json2-transport.ts';
import { JsonRpcTransport } from '../upstream/jsonrpc-transport.ts';
import { MethodDocClient } from '../upstream/method-docs.ts';
import { type BaseLookup, compileTargetPolicy, createPolicyLookup } from '../upstream/target-policy.ts';
import { type RoutingDeps, V1Transport, V2Transport } from '../upstream/transport-routing.ts';
import { VersionClient } from '../upstream/version-client.ts';

export interface Runtime {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly metricsSource: MetricsSource;
  readonly keys: ProxyKeySource;
  readonly license: LicenseSource;
  readonly http: HttpClient;
  /** Both ERP protocols over `http`, which the transports route between (the mcp function's own too). */
  readonly routing: RoutingDeps;
  readonly forward: ForwardDeps;
}

export interface RuntimeOverrides {
  /** Extra HTTP client options (tests: a CA for the self-signed HTTPS case). */
  readonly http?: Omit<HttpClientOptions, 'lookup'>;
  /** The resolver the target policy's connect-time lookup wraps (tests: a fake DNS); `dns.lookup` otherwise. */
  readonly dnsLookup?: BaseLookup;
  readonly keys?: ProxyKeySource;
  readonly license?: LicenseSource;
  readonly metricsSource?: MetricsSource;
}

export function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Runtime {
  const policy = compileTargetPolicy({
    allowedTargets: config.allowedTargets,
    allowedDatabases: config.allowedDatabases,
  });
  const http = createHttpClient({
    ...overrides.http,
    lookup: createPolicyLookup(policy, overrides.dnsLookup),
    // A Lambda instance serves one invocation at a time: one kept-alive socket per ERP is all it
    // can use.
    connectionsPerOrigin: config.runtime === 'lambda' ? 1 : 16,
    // The request deadline answers the client and ends the attempt; this caps a connection
    // attempt on its own, whatever the deadline.
    connectTimeoutMs: Math.min(10, config.maxTimeoutSeconds) * 1000,
  });
  // Locally, EMF records stay in this runtime's own store, which `/_/metrics` reads.
  const store = new LocalMetricsStore();
  const metrics = createMetrics(config, { store });
  const versions = new VersionClient(http);
  const upstream: RoutingDeps = {
    jsonrpc: new JsonRpcTransport(http),
    json2: new Json2Transport(http),
    versions,
    docs: new MethodDocClient(http),
  };
  const logger = createLogger(config);
  return {
    config,
    logger,
    metrics,
    metricsSource:
      overrides.metricsSource ??
      (config.runtime === 'lambda' ? createCloudWatchMetricsSource(config) : createLocalMetricsSource(store)),
    keys: overrides.keys ?? createProxyKeySource(config),
    license: withLicenseWarning(config, logger, overrides.license ?? createLicenseSource(config)),
    http,
    routing: upstream,
    forward: {
      config,
      policy,
      v1: new V1Transport(config.v1Transport, upstream),
      v2: new V2Transport(config.v2Transport, upstream),
      versions,
    },
  };
}

let shared: Runtime | undefined;

/** The process-wide runtime, created on first use from the environment's config. */
export function getRuntime(): Runtime {
  shared ??= createRuntime(getConfig());
  return shared;
}
