/**
 * @module platform/metrics/powertools
 * The factory of the service's Powertools `Metrics` instance.
 *
 * On Lambda, Powertools writes EMF records to stdout and CloudWatch turns them into metrics.
 * Locally (`config.runtime === 'local'`) the very same EMF records are kept in process: the
 * instance's output is swapped for an `EmfSink` (the store `GET /_/metrics` reads, in
 * `operator/local-metrics-store.ts`). Nothing is printed per request, and there is no second,
 * hand-written counting path: what the local endpoint shows is exactly what Powertools produced.
 */
import { Console } from 'node:console';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { MetricsOptions } from '@aws-lambda-powertools/metrics/types';
import type { Config } from '../config.ts';
import { METRICS_NAMESPACE } from '../names.ts';

/**
 * Where a local Metrics instance delivers its EMF records instead of printing them. Defined here
 * so this layer does not depend on the store that implements it.
 */
export interface EmfSink {
  /** One EMF record, as the object Powertools serialized. */
  ingestRecord(record: unknown): void;
  /** One EMF record as printed JSON text (what reaches the instance's console). */
  ingestLine(line: string): void;
}

/** The message Powertools warns with on every publish that has no metric. */
const EMPTY_PUBLISH_WARNING = 'No application metrics to publish';

type MetricsLogger = NonNullable<MetricsOptions['logger']>;

/** What `publishStoredMetrics()` writes to: Powertools calls `console.log(JSON.stringify(emf))`. */
interface EmfConsole {
  log(line: string): void;
}

/**
 * Points a Metrics instance's EMF output at a sink. `console` is TS-private in Powertools 2.35
 * but a plain instance property, and `publishStoredMetrics()` writes each record with
 * `this.console.log(JSON.stringify(emf))`; there is no public output option.
 */
function redirectEmf(metrics: Metrics, sink: EmfConsole): void {
  if (!Object.hasOwn(metrics, 'console')) {
    // A Powertools upgrade moved the output; fail loudly rather than print EMF locally.
    throw new Error('Powertools Metrics has no console property to capture EMF from (version change?)');
  }
  (metrics as unknown as { console: EmfConsole }).console = sink;
}

/** A Metrics instance whose EMF records, its own and its single-metric children's, go to a sink. */
class LocalCapturingMetrics extends Metrics {
  readonly #options: MetricsOptions;
  readonly #sink: EmfSink;

  constructor(options: MetricsOptions, sink: EmfSink) {
    super(options);
    this.#options = options;
    this.#sink = sink;
    // Nothing of this instance may print EMF locally: anything that still reaches the console
    // goes to the sink too.
    redirectEmf(this, { log: (line: string) => sink.ingestLine(line) });
  }

  /**
   * Hands Powertools' own EMF record (`serializeMetrics()`) to the sink as the object it is:
   * printing it as JSON only to parse it back cost a few percent of every request.
   */
  override publishStoredMetrics(): this {
    if (this.hasStoredMetrics()) this.#sink.ingestRecord(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }

  /** Children capture the same way (Powertools' own children would print their EMF). */
  override singleMetric(): Metrics {
    return new LocalCapturingMetrics({ ...this.#options, singleMetric: true }, this.#sink);
  }
}

/**
 * Powertools warns through its `logger` option. This one drops the "No application metrics to
 * publish" warning (it would repeat on every empty publish) and the debug/info chatter, and
 * passes other warnings and errors on.
 */
function quietMetricsLogger(target: () => MetricsLogger): MetricsLogger {
  return {
    debug: () => {},
    info: () => {},
    warn: (...content: unknown[]) => {
      if (typeof content[0] === 'string' && content[0].startsWith(EMPTY_PUBLISH_WARNING)) return;
      target().warn(...content);
    },
    error: (...content: unknown[]) => target().error(...content),
  };
}

export interface CreateMetricsOptions {
  /** Receives Powertools' own warnings (except the empty-publish one). Default: stderr. */
  readonly logger?: MetricsLogger;
  /**
   * The sink EMF records go to. Required when `config.runtime === 'local'` (there is no
   * process-wide default: the caller owns the store and hands the same one to the local
   * metrics source); ignored on Lambda.
   */
  readonly store?: EmfSink;
}

/**
 * Creates the Powertools Metrics instance: namespace and service from config. On Lambda, EMF
 * goes to stdout; locally, records go to `options.store` and nothing is printed.
 *
 * @example
 * const store = new LocalMetricsStore(); // operator/local-metrics-store.ts
 * const metrics = createMetrics(config, { store });
 *
 * @throws Error when `config.runtime === 'local'` and no `options.store` is given.
 */
export function createMetrics(
  config: Pick<Config, 'runtime' | 'serviceName' | 'metricsNamespace'>,
  options: CreateMetricsOptions = {},
): Metrics {
  // The stderr Console is built on the first warning: most processes never print one.
  let warnings = options.logger;
  const metricsOptions: MetricsOptions = {
    namespace: config.metricsNamespace || METRICS_NAMESPACE,
    serviceName: config.serviceName,
    logger: quietMetricsLogger(() => {
      warnings ??= new Console({ stdout: process.stderr, stderr: process.stderr });
      return warnings;
    }),
  };
  if (config.runtime !== 'local') return new Metrics(metricsOptions);
  const { store } = options;
  if (store === undefined) {
    throw new Error(
      'createMetrics: the local runtime needs options.store (the LocalMetricsStore /_/metrics reads)',
    );
  }
  return new LocalCapturingMetrics(metricsOptions, store);
}
