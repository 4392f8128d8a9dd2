/**
 * @module platform/metrics
 * The service's metrics: names, units and dimensions in one catalogue, a factory for the
 * Powertools `Metrics` instance, and the functions that record one request.
 *
 * On Lambda, Powertools writes EMF records to stdout and CloudWatch turns them into metrics.
 * Locally (`config.runtime === 'local'`) the very same EMF records are kept in process: the
 * instance's output console is swapped for a sink that parses each record into a small
 * aggregate (`LocalMetricsStore`), which `GET /_/metrics` renders. Nothing is printed per
 * request, and there is no second, hand-written counting path: what the local endpoint shows
 * is exactly what Powertools produced.
 *
 * Dimensions are low-cardinality only: `service` (always), `api`, and `outcome` on Requests,
 * `code` on Errors. Never a host, database, model or key name.
 */
import { Console } from 'node:console';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricsOptions } from '@aws-lambda-powertools/metrics/types';
import type { Outcome, RequestState } from '../core/request-state.ts';
import { formatSampleValue, type MetricFamily, type MetricSample } from '../operator/prometheus.ts';
import type { Config } from './config.ts';
import { isJsonObject } from './json.ts';
import { METRICS_NAMESPACE } from './names.ts';

/** CloudWatch metric names. */
export const MetricName = {
  /** Count; dimensions api, outcome. */
  Requests: 'Requests',
  /**
   * Count of requests that ended with an error (proxy or ERP); dimensions api, code. `code` is
   * the error code, `license` for a license refusal, `unknown` when none was set.
   */
  Errors: 'Errors',
  /** Count of requests that ended with -32003; dimension api. */
  UpstreamTimeouts: 'UpstreamTimeouts',
  /** Milliseconds spent waiting on the ERP; dimension api. */
  UpstreamLatency: 'UpstreamLatency',
  /** Milliseconds of handler time minus upstream time; dimension api. */
  ProxyOverhead: 'ProxyOverhead',
  /** Bytes of the response body sent to the client; dimension api. */
  ResponseBytes: 'ResponseBytes',
  /** Days until the license expires (negative once expired); no extra dimension. */
  LicenseDaysLeft: 'LicenseDaysLeft',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

/** Dimension names. `service` is a Powertools default dimension on every record. */
export const Dimension = {
  Service: 'service',
  Api: 'api',
  Outcome: 'outcome',
  Code: 'code',
} as const;

/** How a metric is aggregated locally (and which Prometheus type it becomes). */
export type MetricKind = 'counter' | 'gauge' | 'histogram' | 'summary';

export interface MetricSpec {
  readonly name: MetricName;
  readonly unit: (typeof MetricUnit)[keyof typeof MetricUnit];
  readonly kind: MetricKind;
  /** Prometheus family name, the same locally and on AWS. */
  readonly prometheusName: string;
  /**
   * What one unit of the CloudWatch metric is in the Prometheus family's base unit (`0.001`:
   * milliseconds exposed as seconds); 1 when omitted. Applies to values, quantiles, `_sum` and
   * bucket bounds, never to `_count` (see `toPrometheusUnit`).
   */
  readonly prometheusScale?: number;
  /** Dimensions besides `service`, in label order. */
  readonly dimensions: readonly string[];
  /** Prometheus HELP text, in the Prometheus family's unit. */
  readonly help: string;
}

/** Every metric of the service, in exposition order. */
export const METRIC_SPECS: readonly MetricSpec[] = Object.freeze([
  {
    name: MetricName.Requests,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_requests_total',
    dimensions: [Dimension.Api, Dimension.Outcome],
    help: 'Requests handled, by API and outcome (success, erp_error, proxy_error).',
  },
  {
    name: MetricName.Errors,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_errors_total',
    dimensions: [Dimension.Api, Dimension.Code],
    help: 'Requests that ended with an error, by API and error code (proxy codes, license, ERP codes).',
  },
  {
    name: MetricName.UpstreamTimeouts,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_upstream_timeouts_total',
    dimensions: [Dimension.Api],
    help: 'Requests that ended with -32003: the ERP timed out or the connection broke; the call may have run.',
  },
  {
    name: MetricName.UpstreamLatency,
    unit: MetricUnit.Milliseconds,
    kind: 'histogram',
    prometheusName: 'erp_proxy_upstream_latency_seconds',
    prometheusScale: 0.001,
    dimensions: [Dimension.Api],
    help: 'Time spent waiting on the ERP per request, in seconds.',
  },
  {
    name: MetricName.ProxyOverhead,
    unit: MetricUnit.Milliseconds,
    kind: 'histogram',
    prometheusName: 'erp_proxy_proxy_overhead_seconds',
    prometheusScale: 0.001,
    dimensions: [Dimension.Api],
    help: 'Handler time minus upstream time per request, in seconds.',
  },
  {
    name: MetricName.ResponseBytes,
    unit: MetricUnit.Bytes,
    kind: 'summary',
    prometheusName: 'erp_proxy_response_bytes',
    dimensions: [Dimension.Api],
    help: 'Size of the response body sent to the client, in bytes.',
  },
  {
    name: MetricName.LicenseDaysLeft,
    unit: MetricUnit.Count,
    kind: 'gauge',
    prometheusName: 'erp_proxy_license_days_left',
    dimensions: [],
    help: 'Days until the license expires (negative once expired).',
  },
] satisfies MetricSpec[]);

const SPEC_BY_NAME: ReadonlyMap<string, MetricSpec> = new Map(METRIC_SPECS.map((spec) => [spec.name, spec]));

/**
 * A value of `spec` (in its CloudWatch unit) in the unit of its Prometheus family: times
 * `prometheusScale`, cut to 15 significant digits so the float noise of the scaling does not
 * show (250 ms is `0.25`, 5 ms is `0.005`, not `0.005000000000000001`). Not for `_count`.
 */
export function toPrometheusUnit(spec: MetricSpec, value: number): number {
  const scale = spec.prometheusScale ?? 1;
  return scale === 1 ? value : Number((value * scale).toPrecision(15));
}

/**
 * Upper bounds (ms, the unit of the EMF values they sort) of the local latency histogram
 * buckets; `+Inf` is implied. Exposed in seconds (`le="0.005"` … `le="60"`).
 */
export const LATENCY_BUCKETS_MS: readonly number[] = Object.freeze([
  5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000,
]);

/** The message Powertools warns with on every publish that has no metric. */
const EMPTY_PUBLISH_WARNING = 'No application metrics to publish';

type MetricsLogger = NonNullable<MetricsOptions['logger']>;

/** What `publishStoredMetrics()` writes to: Powertools calls `console.log(JSON.stringify(emf))`. */
interface EmfConsole {
  log(line: string): void;
}

// ---------------------------------------------------------------------------------------------
// Local aggregate of EMF records

interface SeriesAggregate {
  readonly labels: Readonly<Record<string, string>>;
  /** Counter total, or the last gauge value. */
  value: number;
  count: number;
  sum: number;
  /** Per-bucket (non-cumulative) counts for histograms; the last slot is `+Inf`. */
  readonly buckets: number[];
}

/** Caps that keep the local store bounded whatever is published. */
const MAX_SERIES = 1000;
const MAX_RECENT_RECORDS = 50;

/**
 * In-process aggregate of EMF records, fed by the local Metrics instance. Counters are summed,
 * gauges keep the last value, latency histograms keep count, sum and fixed buckets, summaries
 * count and sum. Labels are the metric's catalogue dimensions (without `service`, which is the
 * same on every record). Records for metrics outside the catalogue are ignored.
 */
export class LocalMetricsStore {
  readonly #series = new Map<MetricName, Map<string, SeriesAggregate>>();
  /** The last records, kept as objects and serialized only when asked for. */
  readonly #recent: unknown[] = [];
  #seriesCount = 0;
  #droppedSeries = 0;
  #malformedRecords = 0;

  /** Parses one EMF line as printed by Powertools; a malformed line is counted and skipped. */
  ingestLine(line: string): void {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      this.#malformedRecords += 1;
      return;
    }
    this.ingestRecord(record);
  }

  /** Adds one EMF record (`_aws.CloudWatchMetrics[].Metrics[]` plus top-level values). */
  ingestRecord(record: unknown): void {
    if (
      !isJsonObject(record) ||
      !isJsonObject(record._aws) ||
      !Array.isArray(record._aws.CloudWatchMetrics)
    ) {
      this.#malformedRecords += 1;
      return;
    }
    this.#recent.push(record);
    if (this.#recent.length > MAX_RECENT_RECORDS) this.#recent.shift();
    for (const directive of record._aws.CloudWatchMetrics) {
      if (!isJsonObject(directive) || !Array.isArray(directive.Metrics)) continue;
      for (const definition of directive.Metrics) {
        if (!isJsonObject(definition) || typeof definition.Name !== 'string') continue;
        const spec = SPEC_BY_NAME.get(definition.Name);
        if (spec === undefined) continue;
        const values = numericValues(record[definition.Name]);
        if (values.length === 0) continue;
        const labels: Record<string, string> = {};
        for (const dimension of spec.dimensions) {
          const value = record[dimension];
          if (typeof value === 'string' && value !== '') labels[dimension] = value;
        }
        const series = this.#seriesFor(spec, labels);
        if (series !== undefined) addValues(spec.kind, series, values);
      }
    }
  }

  /** The aggregate as metric families, in catalogue order, samples sorted by labels. */
  families(): MetricFamily[] {
    return METRIC_SPECS.map((spec) => {
      const series = [...(this.#series.get(spec.name)?.values() ?? [])].sort((a, b) =>
        compareLabels(a.labels, b.labels),
      );
      return {
        name: spec.prometheusName,
        help: spec.help,
        type: spec.kind,
        samples: series.flatMap((aggregate) => samplesOf(spec, aggregate)),
      };
    });
  }

  /** The last raw EMF lines (a small ring), for debugging. */
  recentRecords(): readonly string[] {
    return this.#recent.map((record) => JSON.stringify(record));
  }

  /** Series refused because the store was full, and lines that were not EMF JSON. */
  stats(): { series: number; droppedSeries: number; malformedRecords: number } {
    return {
      series: this.#seriesCount,
      droppedSeries: this.#droppedSeries,
      malformedRecords: this.#malformedRecords,
    };
  }

  reset(): void {
    this.#series.clear();
    this.#recent.length = 0;
    this.#seriesCount = 0;
    this.#droppedSeries = 0;
    this.#malformedRecords = 0;
  }

  #seriesFor(spec: MetricSpec, labels: Record<string, string>): SeriesAggregate | undefined {
    let byLabels = this.#series.get(spec.name);
    if (byLabels === undefined) {
      byLabels = new Map();
      this.#series.set(spec.name, byLabels);
    }
    const key = JSON.stringify(spec.dimensions.map((dimension) => labels[dimension] ?? null));
    let series = byLabels.get(key);
    if (series === undefined) {
      if (this.#seriesCount >= MAX_SERIES) {
        this.#droppedSeries += 1;
        return undefined;
      }
      series = {
        labels,
        value: 0,
        count: 0,
        sum: 0,
        buckets: spec.kind === 'histogram' ? new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0) : [],
      };
      byLabels.set(key, series);
      this.#seriesCount += 1;
    }
    return series;
  }
}

/** EMF values are a number, or an array when the same metric was added several times. */
function numericValues(raw: unknown): number[] {
  const list = Array.isArray(raw) ? raw : [raw];
  return list.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
}

function addValues(kind: MetricKind, series: SeriesAggregate, values: readonly number[]): void {
  for (const value of values) {
    series.count += 1;
    series.sum += value;
    if (kind === 'gauge') series.value = value;
    else if (kind === 'counter') series.value += value;
    else if (kind === 'histogram') {
      const index = LATENCY_BUCKETS_MS.findIndex((bound) => value <= bound);
      const slot = index === -1 ? LATENCY_BUCKETS_MS.length : index;
      series.buckets[slot] = (series.buckets[slot] ?? 0) + 1;
    }
  }
}

/** The Prometheus samples of one series, in the family's unit (see `toPrometheusUnit`). */
function samplesOf(spec: MetricSpec, series: SeriesAggregate): MetricSample[] {
  const { kind } = spec;
  const { labels } = series;
  if (kind === 'counter' || kind === 'gauge') {
    return [{ labels, value: toPrometheusUnit(spec, series.value) }];
  }
  const samples: MetricSample[] = [];
  if (kind === 'histogram') {
    let cumulative = 0;
    for (let i = 0; i <= LATENCY_BUCKETS_MS.length; i += 1) {
      cumulative += series.buckets[i] ?? 0;
      const bound = LATENCY_BUCKETS_MS[i];
      const le = bound === undefined ? '+Inf' : formatSampleValue(toPrometheusUnit(spec, bound));
      samples.push({ labels: { ...labels, le }, value: cumulative, suffix: '_bucket' });
    }
  }
  samples.push({ labels, value: toPrometheusUnit(spec, series.sum), suffix: '_sum' });
  samples.push({ labels, value: series.count, suffix: '_count' });
  return samples;
}

function compareLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): number {
  const left = JSON.stringify(Object.entries(a));
  const right = JSON.stringify(Object.entries(b));
  return left < right ? -1 : left > right ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// The Metrics instance

/**
 * Points a Metrics instance's EMF output at a sink. `console` is TS-private in Powertools 2.35
 * but a plain instance property, and `publishStoredMetrics()` writes each record with
 * `this.console.log(JSON.stringify(emf))` (ecosystem.md 4(a)); there is no public output option.
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
  readonly #store: LocalMetricsStore;

  constructor(options: MetricsOptions, store: LocalMetricsStore) {
    super(options);
    this.#options = options;
    this.#store = store;
    // Nothing of this instance may print EMF locally: anything that still reaches the console
    // goes to the store too.
    redirectEmf(this, { log: (line: string) => store.ingestLine(line) });
  }

  /**
   * Hands Powertools' own EMF record (`serializeMetrics()`) to the store as the object it is:
   * printing it as JSON only to parse it back cost a few percent of every request.
   */
  override publishStoredMetrics(): this {
    if (this.hasStoredMetrics()) this.#store.ingestRecord(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }

  /** Children capture the same way (Powertools' own children would print their EMF). */
  override singleMetric(): Metrics {
    return new LocalCapturingMetrics({ ...this.#options, singleMetric: true }, this.#store);
  }
}

/**
 * Powertools warns through its `logger` option. This one drops the "No application metrics to
 * publish" warning (it would repeat on every empty publish) and the debug/info chatter, and
 * passes other warnings and errors on.
 */
function quietMetricsLogger(target: MetricsLogger): MetricsLogger {
  return {
    debug: () => {},
    info: () => {},
    warn: (...content: unknown[]) => {
      if (typeof content[0] === 'string' && content[0].startsWith(EMPTY_PUBLISH_WARNING)) return;
      target.warn(...content);
    },
    error: (...content: unknown[]) => target.error(...content),
  };
}

export interface CreateMetricsOptions {
  /** Receives Powertools' own warnings (except the empty-publish one). Default: stderr. */
  readonly logger?: MetricsLogger;
  /**
   * The store EMF records go to. Required when `config.runtime === 'local'` (there is no
   * process-wide default: the caller owns the store and hands the same one to the local
   * metrics source); ignored on Lambda.
   */
  readonly store?: LocalMetricsStore;
}

/**
 * Creates the Powertools Metrics instance: namespace and service from config. On Lambda, EMF
 * goes to stdout; locally, records go to `options.store` and nothing is printed.
 *
 * @throws Error when `config.runtime === 'local'` and no `options.store` is given.
 */
export function createMetrics(
  config: Pick<Config, 'runtime' | 'serviceName' | 'metricsNamespace'>,
  options: CreateMetricsOptions = {},
): Metrics {
  const warnings = options.logger ?? new Console({ stdout: process.stderr, stderr: process.stderr });
  const metricsOptions: MetricsOptions = {
    namespace: config.metricsNamespace || METRICS_NAMESPACE,
    serviceName: config.serviceName,
    logger: quietMetricsLogger(warnings),
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

/**
 * The `code` dimension value of a license refusal. The refusal's envelope code (0) is also the
 * code of every v1 ERP error, so it is counted under its own name (see `errorCodeDimension`).
 */
export const LICENSE_CODE = 'license';
/** The `code` dimension value when the chain set no error code. */
export const UNKNOWN_CODE = 'unknown';

/**
 * The `code` dimension value of a failed request. A license refusal and a v1 ERP error both
 * carry code 0 in the envelope; the outcome tells them apart, so the refusal is counted as
 * `license` (outcome `proxy_error`) and the ERP error stays `0` (outcome `erp_error`). Otherwise
 * the error code itself, or `unknown` when the chain did not set one.
 */
export function errorCodeDimension(outcome: Outcome, code: number | undefined): string {
  if (code === undefined || !Number.isInteger(code)) return UNKNOWN_CODE;
  if (code === 0 && outcome === 'proxy_error') return LICENSE_CODE;
  return String(code);
}

/** Milliseconds rounded to a hundredth, for log fields and metric values alike. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/**
 * What one request's metrics are made of. `outcome` is required: the envelope helpers always
 * set it, and the observe middleware supplies the one fallback when a chain did not.
 */
export type RequestMetrics = Pick<RequestState, 'api' | 'errorCode' | 'upstreamMs' | 'responseBytes'> & {
  readonly outcome: Outcome;
};

/** The single-metric emitters of one `Metrics` instance, created once and reused. */
interface SingleRecords {
  readonly requests: Metrics;
  readonly errors: Metrics;
  readonly license: Metrics;
}

const singleRecordsOf = new WeakMap<Metrics, SingleRecords>();

/**
 * Powertools' `singleMetric()` builds a whole new `Metrics` (environment reads, a new Console):
 * measured at about a third of the proxy's per-request overhead when called twice per request.
 * A single-metric instance publishes and clears its metrics and dimensions on every
 * `addMetric`, so one per record kind is created once and reused.
 */
function singleRecords(metrics: Metrics): SingleRecords {
  let records = singleRecordsOf.get(metrics);
  if (!records) {
    records = {
      requests: metrics.singleMetric(),
      errors: metrics.singleMetric(),
      license: metrics.singleMetric(),
    };
    singleRecordsOf.set(metrics, records);
  }
  return records;
}

/**
 * Records one request's metrics. `Requests` (with `outcome`) and `Errors` (with `code`) are
 * single-metric records, because a dimension set in EMF applies to every metric of a record and
 * those two dimensions belong to those metrics only. The per-API metrics (timeouts, latency,
 * overhead, bytes) are stored on `metrics` under `{service, api}`; the caller publishes them
 * with `metrics.publishStoredMetrics()` right after, in the same tick, so requests running
 * concurrently in the local server cannot mix their stored metrics.
 */
export function recordRequest(metrics: Metrics, state: RequestMetrics, durationMs: number): void {
  const { api, outcome } = state;
  const records = singleRecords(metrics);

  records.requests
    .addDimension(Dimension.Api, api)
    .addDimension(Dimension.Outcome, outcome)
    .addMetric(MetricName.Requests, MetricUnit.Count, 1);

  if (outcome !== 'success') {
    records.errors
      .addDimension(Dimension.Api, api)
      .addDimension(Dimension.Code, errorCodeDimension(outcome, state.errorCode))
      .addMetric(MetricName.Errors, MetricUnit.Count, 1);
  }

  const upstreamMs =
    state.upstreamMs !== undefined && Number.isFinite(state.upstreamMs) ? state.upstreamMs : undefined;
  metrics.addDimension(Dimension.Api, api);
  // Always emitted (0 or 1), so the timeout alarm and the counter have data even when all is well.
  metrics.addMetric(MetricName.UpstreamTimeouts, MetricUnit.Count, state.errorCode === -32003 ? 1 : 0);
  if (upstreamMs !== undefined) {
    metrics.addMetric(MetricName.UpstreamLatency, MetricUnit.Milliseconds, roundMs(upstreamMs));
  }
  metrics.addMetric(
    MetricName.ProxyOverhead,
    MetricUnit.Milliseconds,
    roundMs(Math.max(0, durationMs - (upstreamMs ?? 0))),
  );
  if (state.responseBytes !== undefined && Number.isFinite(state.responseBytes)) {
    metrics.addMetric(MetricName.ResponseBytes, MetricUnit.Bytes, state.responseBytes);
  }
}

/** Records the license's days left as its own record (published immediately). */
export function recordLicenseDaysLeft(metrics: Metrics, days: number): void {
  if (!Number.isFinite(days)) return;
  singleRecords(metrics).license.addMetric(MetricName.LicenseDaysLeft, MetricUnit.Count, days);
}
