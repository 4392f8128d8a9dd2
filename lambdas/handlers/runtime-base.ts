/**
 * @module handlers/runtime-base
 * What every function's runtime holds, whatever its endpoint: the config, the logger, the
 * metrics, the proxy keys and the license (the chain's observe, `x-api-key` and license steps).
 * The parts of the execute and version functions are in runtime-upstream.ts; each handler module
 * composes what it uses (runtime.ts says how, and builds everything for the local server).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { checkKeysConfirm, withKeysConfirmChecked } from '../core/confirm/policy.ts';
import { LocalMetricsStore } from '../operator/local-metrics-store.ts';
import type { MetricsSource } from '../operator/metrics-source.ts';
import type { AuditStore } from '../platform/audit/audit-store.ts';
import { type BrakesSource, type BrakesStore, createBrakesSource } from '../platform/brakes/brakes-source.ts';
import { createBrakesStore } from '../platform/brakes/brakes-store.ts';
import type { Config } from '../platform/config.ts';
import { withLicenseWarning } from '../platform/license-notice.ts';
import { createLogger } from '../platform/logger.ts';
import { createMetrics } from '../platform/metrics/powertools.ts';
import { recordBrakesReadFailure } from '../platform/metrics/record.ts';
import {
  createLicenseSource,
  createProxyKeySource,
  type LicenseSource,
  type ProxyKeySource,
} from '../platform/secrets.ts';
import type { StateStore } from '../platform/state/state-store.ts';
import type { OAuthResourceServer } from '../protocol/oauth/resource-server.ts';
import type { HttpClientOptions } from '../upstream/http-client.ts';
import type { BaseLookup } from '../upstream/target-policy.ts';

export interface RuntimeOverrides {
  /** Extra HTTP client options (tests: a CA for the self-signed HTTPS case). */
  readonly http?: Omit<HttpClientOptions, 'lookup'>;
  /** The resolver the target policy's connect-time lookup wraps (tests: a fake DNS); `dns.lookup` otherwise. */
  readonly dnsLookup?: BaseLookup;
  readonly keys?: ProxyKeySource;
  readonly license?: LicenseSource;
  readonly metricsSource?: MetricsSource;
  /** The mcp function's OAuth resource server (tests: one with a fake fetch); from the config otherwise. */
  readonly oauth?: OAuthResourceServer;
  /** The proxy's state store (tests: one of their own); from the config otherwise. */
  readonly store?: StateStore;
  /** The audit store, its writer and its reader (tests, and the local server's one ring); from the config otherwise. */
  readonly auditStore?: AuditStore;
  /** Where the operators' brakes are kept (tests); from the config otherwise. */
  readonly brakesStore?: BrakesStore;
}

/** The parts every handler's chain uses. */
export interface BaseRuntime {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly keys: ProxyKeySource;
  readonly license: LicenseSource;
  /** Where the operators' brakes are kept; `undefined`: no store (deployed without a table). */
  readonly brakesStore: BrakesStore | undefined;
  /** The instance's copy of the brakes, read every `BRAKES_REFRESH` (platform/brakes/brakes-source.ts). */
  readonly brakes: BrakesSource | undefined;
}

/**
 * Where a local runtime's EMF records stay, for its `/_/metrics` to read; `undefined` on Lambda,
 * where Powertools prints them for CloudWatch.
 */
export function localMetricsStore(config: Pick<Config, 'runtime'>): LocalMetricsStore | undefined {
  return config.runtime === 'local' ? new LocalMetricsStore() : undefined;
}

/** The base parts; locally, the metrics deliver their records to `store`. */
export function createBaseRuntime(
  config: Config,
  overrides: RuntimeOverrides = {},
  store: LocalMetricsStore | undefined = localMetricsStore(config),
  writeTools?: readonly string[],
): BaseRuntime {
  const logger = createLogger(config);
  const metrics = createMetrics(config, store ? { store } : {});
  const brakesStore = overrides.brakesStore ?? createBrakesStore(config);
  // Keys from the environment are checked now: a local proxy with a bad `confirm` does not start.
  if (config.proxyKeysSecretId === undefined) checkKeysConfirm(config.localKeys, writeTools);
  return {
    config,
    logger,
    metrics,
    // A key policy's `confirm` names write tools of the MCP tool declarations (core/confirm/policy.ts),
    // checked where the tools are served (`writeTools`: the mcp function and the local server).
    keys: withKeysConfirmChecked(overrides.keys ?? createProxyKeySource(config), writeTools),
    // The first read of the license logs a warning when it is invalid or expiring (issue 26).
    license: withLicenseWarning(config, logger, overrides.license ?? createLicenseSource(config)),
    brakesStore,
    brakes:
      brakesStore &&
      createBrakesSource({
        store: brakesStore,
        refreshMs: config.brakesRefreshSeconds * 1000,
        onReadFailure: ({ error, kept }) => {
          logger.warn(
            kept === 'last'
              ? 'brakes: the store could not be read; the brakes last read stay in force'
              : 'brakes: the store could not be read and no brakes were ever read; serving without (fail open)',
            { error: error instanceof Error ? error.message : String(error), kept },
          );
          recordBrakesReadFailure(metrics, kept);
        },
      }),
  };
}
