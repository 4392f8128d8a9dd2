/**
 * @module operator/local-metrics-store
 * The in-process aggregate of EMF records behind the local `GET /_/metrics`. The local
 * Powertools `Metrics` instance (`platform/metrics/powertools.ts`) delivers every record it
 * publishes here instead of printing it; `families()` turns the aggregate into Prometheus
 * metric families for `prometheus.ts` to render.
 */
import { isJsonObject } from '../platform/json.ts';
import {
  findMetricSpec,
  LATENCY_BUCKETS_MS,
  METRIC_SPECS,
  type MetricKind,
  type MetricName,
  type MetricSpec,
  prometheusType,
  toPrometheusUnit,
} from '../platform/metrics/catalogue.ts';
import type { EmfSink } from '../platform/metrics/powertools.ts';
import { formatSampleValue, type MetricFamily, type MetricSample } from './prometheus.ts';

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
 *
 * @example
 * const store = new LocalMetricsStore();
 * const metrics = createMetrics(config, { store }); // local runtime
 * renderPrometheus(store.families());
 */
export class LocalMetricsStore implements EmfSink {
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
        const spec = findMetricSpec(definition.Name);
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
        help: spec.kind === 'counter' ? `${spec.help} Since the process started.` : spec.help,
        type: prometheusType(spec, 'local'),
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
