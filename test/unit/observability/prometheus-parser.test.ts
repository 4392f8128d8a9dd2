/**
 * `GET /_/metrics` on both paths (the local EMF aggregate and CloudWatch) as a Prometheus
 * text-format parser reads it (parse-prometheus-text-format, a port of the Prometheus Python
 * client's parser), and against the naming rules: a `_total` name is a counter, and a count
 * that can go down (a window sum) is not a counter.
 *
 * That parser is lenient (`a b` parses, with the value "b"; an unknown TYPE is kept) and, like
 * prom2json, folds a labelled histogram or summary into one entry; so the tests also check every
 * value it returns is a number in Prometheus' float syntax, and every TYPE a known one.
 */
import { spawnSync } from 'node:child_process';
import type { MetricDataResult } from '@aws-sdk/client-cloudwatch';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { buildMetricDataQueries, familiesFromResults } from '../../../lambdas/operator/metrics-source.ts';
import { type MetricFamily, renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { METRIC_SPECS } from '../../../lambdas/platform/metrics/catalogue.ts';

/** One EMF record as Powertools prints it. */
function emf(dimensions: Record<string, string>, values: Record<string, number>): unknown {
  return {
    _aws: {
      Timestamp: 0,
      CloudWatchMetrics: [
        {
          Namespace: 'ErpProxy',
          Dimensions: [['service', ...Object.keys(dimensions)]],
          Metrics: Object.keys(values).map((Name) => ({ Name, Unit: 'Count' })),
        },
      ],
    },
    service: 'erp-proxy',
    ...dimensions,
    ...values,
  };
}

function localText(): string {
  const store = new LocalMetricsStore();
  store.ingestRecord(
    emf({ api: 'v1', outcome: 'success' }, { Requests: 1, UpstreamLatency: 40, ProxyOverhead: 2 }),
  );
  store.ingestRecord(
    emf({ api: 'v1', outcome: 'success' }, { Requests: 1, UpstreamLatency: 15000, ProxyOverhead: 3 }),
  );
  store.ingestRecord(emf({ api: 'v2', outcome: 'erp_error' }, { Requests: 1, ResponseBytes: 512 }));
  store.ingestRecord(emf({ api: 'v2', code: '422' }, { Errors: 1 }));
  store.ingestRecord(emf({ api: 'v1' }, { UpstreamTimeouts: 1 }));
  store.ingestRecord(emf({}, { LicenseDaysLeft: 120 }));
  return renderPrometheus(store.families());
}

const CLOUDWATCH_RESULTS: MetricDataResult[] = [
  { Id: 'requests_v1_success', Values: [5, 2] },
  { Id: 'requests_v2_erp_error', Values: [1] },
  { Id: 'timeouts_v1', Values: [1] },
  { Id: 'upstream_v1_p50', Values: [120.5] },
  { Id: 'upstream_v1_p99', Values: [15000] },
  { Id: 'upstream_v1_sum', Values: [16000] },
  { Id: 'upstream_v1_count', Values: [8] },
  { Id: 'overhead_v1_p50', Values: [0.3] },
  { Id: 'overhead_v1_p99', Values: [25] },
  { Id: 'overhead_v1_sum', Values: [7.77] },
  { Id: 'overhead_v1_count', Values: [8] },
  { Id: 'bytes_v2_sum', Values: [4096] },
  { Id: 'bytes_v2_count', Values: [8] },
  { Id: 'license_days_left', Values: [42] },
  { Id: 'errors_by_code', Label: 'v2|422', Values: [2, 1] },
  { Id: 'errors_by_code', Label: 'v1|license', Values: [4] },
];

function cloudWatchText(): string {
  const config = {
    metricsWindowSeconds: 300,
    metricsCacheSeconds: 60,
    metricsNamespace: 'ErpProxy',
    serviceName: 'erp-proxy',
    region: 'eu-west-1',
  };
  return renderPrometheus(familiesFromResults(buildMetricDataQueries(config), CLOUDWATCH_RESULTS, 300));
}

function byName(families: readonly ParsedFamily[]): Map<string, ParsedFamily> {
  return new Map(families.map((family) => [family.name, family]));
}

/** A sample value as the text format writes a float. */
const FLOAT = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/;

/** Every value the parser returned, wherever it put it. */
function valuesOf(family: ParsedFamily): string[] {
  return family.metrics.flatMap((sample) => [
    ...(sample.value === undefined ? [] : [sample.value]),
    ...(sample.sum === undefined ? [] : [sample.sum]),
    ...(sample.count === undefined ? [] : [sample.count]),
    ...Object.values(sample.buckets ?? {}),
    ...Object.values(sample.quantiles ?? {}),
  ]);
}

/** The naming rules every exposition here must follow. */
function expectPrometheusNaming(families: readonly ParsedFamily[]): void {
  for (const family of families) {
    expect(family.name, family.name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
    if (family.name.endsWith('_total')) expect(family.type, family.name).toBe('COUNTER');
    // No count here is a counter: on AWS it is a window sum, which goes down.
    expect(family.type, family.name).not.toBe('COUNTER');
    expect(['GAUGE', 'SUMMARY', 'HISTOGRAM'], family.name).toContain(family.type);
    for (const value of valuesOf(family)) expect(value, family.name).toMatch(FLOAT);
  }
}

/**
 * Prometheus's own linter, `promtool check metrics` (Debian's `prometheus` package; `.ci/run`
 * installs it when missing): its output on `text` (empty when it finds nothing), or `undefined`
 * when promtool is not installed here.
 */
function promtoolFindings(text: string): string | undefined {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error !== undefined) return undefined;
  return `${run.stdout}${run.stderr}`.trim() + (run.status === 0 ? '' : `\n(exit status ${run.status})`);
}

/** Whether promtool must be there: in CI (`.ci/run` installs it), its absence fails the test. */
const PROMTOOL_REQUIRED = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const promtoolAvailable = promtoolFindings('') !== undefined;

describe.each([
  ['local', localText, { latency: 'HISTOGRAM' }],
  ['CloudWatch', cloudWatchText, { latency: 'SUMMARY' }],
] as const)('/_/metrics from the %s path, through a Prometheus text-format parser', (_path, text, types) => {
  it('parses, with one family per catalogue metric, named and typed by the rules', () => {
    const families = parsePrometheusTextFormat(text());
    expect(families.map((family) => family.name)).toEqual(METRIC_SPECS.map((spec) => spec.prometheusName));
    expectPrometheusNaming(families);
    const parsed = byName(families);
    for (const name of ['erp_proxy_requests', 'erp_proxy_errors', 'erp_proxy_upstream_timeouts']) {
      expect(parsed.get(name)?.type, name).toBe('GAUGE');
    }
    expect(parsed.get('erp_proxy_license_remaining_seconds')?.type).toBe('GAUGE');
    expect(parsed.get('erp_proxy_upstream_latency_seconds')?.type).toBe(types.latency);
    expect(parsed.get('erp_proxy_response_bytes')?.type).toBe('SUMMARY');
  });

  it.runIf(promtoolAvailable || PROMTOOL_REQUIRED)(
    'passes promtool check metrics (base units: the license family in seconds, not days)',
    () => {
      const rendered = text();
      expect(rendered).toContain('erp_proxy_license_remaining_seconds');
      expect(promtoolFindings(rendered), 'promtool is not installed (apt-get install prometheus)').toBe('');
    },
  );

  it('gives the parser the values that were counted', () => {
    const parsed = byName(parsePrometheusTextFormat(text()));
    const requests = parsed.get('erp_proxy_requests')?.metrics ?? [];
    expect(requests).toContainEqual({ labels: { api: 'v2', outcome: 'erp_error' }, value: '1' });
    expect(parsed.get('erp_proxy_errors')?.metrics).toContainEqual(
      expect.objectContaining({ labels: { api: 'v2', code: '422' } }),
    );
    expect(parsed.get('erp_proxy_upstream_timeouts')?.metrics).toContainEqual({
      labels: { api: 'v1' },
      value: '1',
    });
    // One latency series (v1): the parser folds it into its buckets (local) or quantiles (AWS).
    const [latency] = parsed.get('erp_proxy_upstream_latency_seconds')?.metrics ?? [];
    const spread = { ...latency?.buckets, ...latency?.quantiles };
    expect(Object.keys(spread).length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...Object.values(spread).map(Number))).toBeGreaterThan(0);
  });
});

describe('the renderer enforces the naming rule', () => {
  it('refuses a _total family that is not a counter', () => {
    const family: MetricFamily = { name: 'erp_proxy_requests_total', help: 'x', type: 'gauge', samples: [] };
    expect(() => renderPrometheus([family])).toThrow(/_total name must be a counter/);
    expect(() => renderPrometheus([{ ...family, type: 'counter' }])).not.toThrow();
  });
});
