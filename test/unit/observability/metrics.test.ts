import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLocalMetricsSource } from '../../../lambdas/operator/metrics-source.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import {
  createMetrics,
  LATENCY_BUCKETS_MS,
  LocalMetricsStore,
  METRIC_SPECS,
  MetricName,
  type RequestMetrics,
  recordLicenseDaysLeft,
  recordRequest,
  roundMs,
  toPrometheusUnit,
} from '../../../lambdas/platform/metrics.ts';

/** Powertools writes EMF and warnings through private Consoles, so spy on the streams. */
function captureStreams(): { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    stderr.push(String(chunk));
    return true;
  });
  return { stdout, stderr };
}

function state(overrides: Partial<RequestMetrics> & Pick<RequestMetrics, 'outcome'>): RequestMetrics {
  return { api: 'v1', ...overrides };
}

const localConfig = loadConfig({});
const lambdaConfig = loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-execute-v1' });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('local EMF capture', () => {
  it('keeps Powertools EMF records in process, prints nothing, and renders them as Prometheus text', async () => {
    // Prepare
    const out = captureStreams();
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });

    // Act: three requests, published as the observe middleware does.
    recordRequest(metrics, state({ outcome: 'success', upstreamMs: 40, responseBytes: 300 }), 50);
    metrics.publishStoredMetrics();
    recordRequest(metrics, state({ outcome: 'proxy_error', errorCode: -32003, upstreamMs: 15000 }), 15004);
    metrics.publishStoredMetrics();
    recordRequest(metrics, state({ api: 'v2', outcome: 'erp_error', errorCode: 422, responseBytes: 120 }), 7);
    metrics.publishStoredMetrics();
    recordLicenseDaysLeft(metrics, 30);
    metrics.publishStoredMetrics(); // nothing stored: must not warn
    const families = await createLocalMetricsSource(store).snapshot();
    const text = renderPrometheus(families);

    // Assess: nothing printed, records captured.
    expect(out.stdout).toEqual([]);
    expect(out.stderr).toEqual([]);
    const records = store.recentRecords().map((line) => JSON.parse(line));
    expect(records.length).toBe(9); // 3 × Requests, 2 × Errors, 3 × per-API, 1 × license
    expect(records[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [{ Namespace: 'ErpProxy', Metrics: [{ Name: 'Requests', Unit: 'Count' }] }],
      },
      service: 'erp-proxy',
      api: 'v1',
      outcome: 'success',
      Requests: 1,
    });

    const counters = text
      .split('\n')
      .filter((line) => /^(# (HELP|TYPE) )?erp_proxy_(requests|errors|upstream_timeouts)_total/.test(line))
      .join('\n');
    expect(counters).toBe(
      [
        '# HELP erp_proxy_requests_total Requests handled, by API and outcome (success, erp_error, proxy_error).',
        '# TYPE erp_proxy_requests_total counter',
        'erp_proxy_requests_total{api="v1",outcome="proxy_error"} 1',
        'erp_proxy_requests_total{api="v1",outcome="success"} 1',
        'erp_proxy_requests_total{api="v2",outcome="erp_error"} 1',
        '# HELP erp_proxy_errors_total Requests that ended with an error, by API and error code (proxy codes, license, ERP codes).',
        '# TYPE erp_proxy_errors_total counter',
        'erp_proxy_errors_total{api="v1",code="-32003"} 1',
        'erp_proxy_errors_total{api="v2",code="422"} 1',
        '# HELP erp_proxy_upstream_timeouts_total Requests that ended with -32003: the ERP timed out or the connection broke; the call may have run.',
        '# TYPE erp_proxy_upstream_timeouts_total counter',
        'erp_proxy_upstream_timeouts_total{api="v1"} 1',
        'erp_proxy_upstream_timeouts_total{api="v2"} 0',
      ].join('\n'),
    );
    // Latencies are exposed in seconds (the EMF values stay milliseconds: 40 ms and 15000 ms).
    expect(text).toContain(
      '# HELP erp_proxy_upstream_latency_seconds Time spent waiting on the ERP per request, in seconds.\n' +
        '# TYPE erp_proxy_upstream_latency_seconds histogram\n',
    );
    expect(text).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.025"} 0\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.05"} 1\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="10"} 1\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="30"} 2\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="+Inf"} 2\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_sum{api="v1"} 15.04\n');
    expect(text).toContain('erp_proxy_upstream_latency_seconds_count{api="v1"} 2\n');
    // Overhead = duration - upstream: 10 + 4 ms on v1, 7 ms on v2 (no upstream).
    expect(text).toContain(
      '# HELP erp_proxy_proxy_overhead_seconds Handler time minus upstream time per request, in seconds.\n' +
        '# TYPE erp_proxy_proxy_overhead_seconds histogram\n',
    );
    expect(text).toContain('erp_proxy_proxy_overhead_seconds_sum{api="v1"} 0.014\n');
    expect(text).toContain('erp_proxy_proxy_overhead_seconds_sum{api="v2"} 0.007\n');
    expect(text).toContain('erp_proxy_proxy_overhead_seconds_count{api="v2"} 1\n');
    expect(text).not.toContain('erp_proxy_upstream_latency_seconds_count{api="v2"}');
    expect(text).not.toContain('_milliseconds');
    // The CloudWatch metrics themselves stay in milliseconds.
    const perApi = records.find((record) => record.UpstreamLatency !== undefined);
    expect(perApi).toMatchObject({ UpstreamLatency: 40, ProxyOverhead: 10 });
    expect(perApi._aws.CloudWatchMetrics[0].Metrics).toContainEqual({
      Name: 'UpstreamLatency',
      Unit: 'Milliseconds',
    });
    expect(text).toContain('# TYPE erp_proxy_response_bytes summary\n');
    expect(text).toContain('erp_proxy_response_bytes_sum{api="v1"} 300\n');
    expect(text).toContain('erp_proxy_response_bytes_count{api="v2"} 1\n');
    expect(text).toContain('# TYPE erp_proxy_license_days_left gauge\nerp_proxy_license_days_left 30\n');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('puts the code dimension on Errors only, and outcome on Requests only', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });

    recordRequest(metrics, state({ outcome: 'proxy_error', errorCode: -32000 }), 3);
    metrics.publishStoredMetrics();

    const records = store.recentRecords().map((line) => JSON.parse(line));
    const dimensionsOf = (name: string): string[][] =>
      records.find((r) => r._aws.CloudWatchMetrics[0].Metrics.some((m: { Name: string }) => m.Name === name))
        ._aws.CloudWatchMetrics[0].Dimensions;
    expect(dimensionsOf('Requests')).toEqual([['service', 'api', 'outcome']]);
    expect(dimensionsOf('Errors')).toEqual([['service', 'api', 'code']]);
    expect(dimensionsOf('ProxyOverhead')).toEqual([['service', 'api']]);
    expect(dimensionsOf('UpstreamTimeouts')).toEqual([['service', 'api']]);
  });

  it('counts a license refusal as code "license" and keeps "0" for a v1 ERP error', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });

    // LicenseError: code 0, HTTP 403, outcome proxy_error. v1 ERP error: code 0, HTTP 200.
    recordRequest(metrics, state({ outcome: 'proxy_error', errorCode: 0 }), 1);
    metrics.publishStoredMetrics();
    recordRequest(metrics, state({ outcome: 'erp_error', errorCode: 0, upstreamMs: 3 }), 5);
    metrics.publishStoredMetrics();
    recordRequest(metrics, state({ outcome: 'erp_error', errorCode: 0, upstreamMs: 3 }), 5);
    metrics.publishStoredMetrics();
    recordRequest(metrics, state({ api: 'aux', outcome: 'proxy_error' }), 1);
    metrics.publishStoredMetrics();

    const text = renderPrometheus(store.families());
    const errors = text.split('\n').filter((line) => line.startsWith('erp_proxy_errors_total{'));
    expect(errors).toEqual([
      'erp_proxy_errors_total{api="aux",code="unknown"} 1',
      'erp_proxy_errors_total{api="v1",code="0"} 2',
      'erp_proxy_errors_total{api="v1",code="license"} 1',
    ]);
  });

  it('needs a store for the local runtime: there is no process-wide default', () => {
    expect(() => createMetrics(localConfig)).toThrow(/local runtime needs options\.store/);
    expect(() => createMetrics(localConfig, {})).toThrow(/options\.store/);
  });

  it('rounds milliseconds to a hundredth', () => {
    expect(roundMs(12.3449)).toBe(12.34);
    expect(roundMs(0.004)).toBe(0);
    expect(roundMs(15000)).toBe(15000);
  });

  it('aggregates hand-written EMF records: array values, gauges keep the last value, junk is skipped', () => {
    const store = new LocalMetricsStore();
    const emf = (
      body: Record<string, unknown>,
      metrics: { Name: string; Unit: string }[],
      dims: string[][],
    ) =>
      JSON.stringify({
        _aws: {
          Timestamp: 0,
          CloudWatchMetrics: [{ Namespace: 'ErpProxy', Dimensions: dims, Metrics: metrics }],
        },
        service: 'erp-proxy',
        ...body,
      });

    store.ingestLine(
      emf(
        { api: 'aux', UpstreamLatency: [1, 7, 70000] },
        [{ Name: 'UpstreamLatency', Unit: 'Milliseconds' }],
        [['service', 'api']],
      ),
    );
    store.ingestLine(
      emf({ LicenseDaysLeft: 9 }, [{ Name: 'LicenseDaysLeft', Unit: 'Count' }], [['service']]),
    );
    store.ingestLine(
      emf({ LicenseDaysLeft: 8 }, [{ Name: 'LicenseDaysLeft', Unit: 'Count' }], [['service']]),
    );
    store.ingestLine(emf({ Other: 1 }, [{ Name: 'Other', Unit: 'Count' }], [['service']]));
    store.ingestLine('not json');
    store.ingestLine('{"no":"emf"}');

    const families = store.families();
    const latency = families.find((f) => f.name === 'erp_proxy_upstream_latency_seconds');
    expect(latency?.samples).toContainEqual({
      labels: { api: 'aux', le: '0.005' },
      value: 1,
      suffix: '_bucket',
    });
    expect(latency?.samples).toContainEqual({
      labels: { api: 'aux', le: '0.01' },
      value: 2,
      suffix: '_bucket',
    });
    expect(latency?.samples).toContainEqual({
      labels: { api: 'aux', le: '60' },
      value: 2,
      suffix: '_bucket',
    });
    expect(latency?.samples).toContainEqual({
      labels: { api: 'aux', le: '+Inf' },
      value: 3,
      suffix: '_bucket',
    });
    expect(latency?.samples).toContainEqual({ labels: { api: 'aux' }, value: 70.008, suffix: '_sum' });
    expect(latency?.samples).toContainEqual({ labels: { api: 'aux' }, value: 3, suffix: '_count' });
    expect(latency?.samples).toHaveLength(LATENCY_BUCKETS_MS.length + 3);
    expect(families.find((f) => f.name === 'erp_proxy_license_days_left')?.samples).toEqual([
      { labels: {}, value: 8 },
    ]);
    expect(families.map((f) => f.name)).toEqual(METRIC_SPECS.map((s) => s.prometheusName));
    expect(store.stats()).toMatchObject({ malformedRecords: 2 });
  });

  it('exposes latency in seconds: 250 ms lands in the le="0.25" bucket and sums to 0.25', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });

    recordRequest(metrics, state({ outcome: 'success', upstreamMs: 250 }), 250.5);
    metrics.publishStoredMetrics();

    const lines = renderPrometheus(store.families()).split('\n');
    expect(lines).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.1"} 0');
    expect(lines).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.25"} 1');
    expect(lines).toContain('erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.5"} 1');
    expect(lines).toContain('erp_proxy_upstream_latency_seconds_sum{api="v1"} 0.25');
    expect(lines).toContain('erp_proxy_upstream_latency_seconds_count{api="v1"} 1');
    expect(lines).toContain('erp_proxy_proxy_overhead_seconds_bucket{api="v1",le="0.005"} 1');
    expect(lines).toContain('erp_proxy_proxy_overhead_seconds_sum{api="v1"} 0.0005');
  });

  it('renders every bucket bound as a short decimal in seconds, the same bounds as in milliseconds', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });
    recordRequest(metrics, state({ outcome: 'success', upstreamMs: 1 }), 2);
    metrics.publishStoredMetrics();

    const text = renderPrometheus(store.families());
    for (const family of ['erp_proxy_upstream_latency_seconds', 'erp_proxy_proxy_overhead_seconds']) {
      const bounds = [
        ...text.matchAll(new RegExp(`^${family}_bucket\\{api="v1",le="([^"]*)"\\} `, 'gm')),
      ].map((match) => match[1]);
      expect(bounds).toEqual([
        '0.005',
        '0.01',
        '0.025',
        '0.05',
        '0.1',
        '0.25',
        '0.5',
        '1',
        '2.5',
        '5',
        '10',
        '30',
        '60',
        '+Inf',
      ]);
      for (const bound of bounds.slice(0, -1)) {
        expect(bound).toMatch(/^\d+(\.\d{1,3})?$/);
      }
      expect(bounds.slice(0, -1).map((bound) => Number(bound) * 1000)).toEqual(
        LATENCY_BUCKETS_MS.map((ms) => expect.closeTo(ms, 9)),
      );
    }
  });

  it('converts to the Prometheus unit without float noise, and leaves other units alone', () => {
    const latency = METRIC_SPECS.find((spec) => spec.name === MetricName.UpstreamLatency);
    const bytes = METRIC_SPECS.find((spec) => spec.name === MetricName.ResponseBytes);
    if (latency === undefined || bytes === undefined) throw new Error('catalogue changed');
    expect(toPrometheusUnit(latency, 5)).toBe(0.005);
    expect(toPrometheusUnit(latency, 0.3)).toBe(0.0003);
    expect(toPrometheusUnit(latency, 15040.37)).toBe(15.04037);
    expect(String(toPrometheusUnit(latency, 0.1 + 0.2))).toBe('0.0003');
    expect(toPrometheusUnit(bytes, 4096)).toBe(4096);
    expect(
      METRIC_SPECS.filter((spec) => spec.prometheusScale !== undefined).map((s) => s.prometheusName),
    ).toEqual(['erp_proxy_upstream_latency_seconds', 'erp_proxy_proxy_overhead_seconds']);
  });

  it('does not warn "No application metrics to publish" on an empty publish', () => {
    const out = captureStreams();
    const warn = vi.fn();
    const metrics = createMetrics(localConfig, {
      store: new LocalMetricsStore(),
      logger: { debug: vi.fn(), info: vi.fn(), warn, error: vi.fn() },
    });

    metrics.publishStoredMetrics();
    metrics.publishStoredMetrics();

    expect(warn).not.toHaveBeenCalled();
    expect(out.stdout).toEqual([]);
    expect(out.stderr).toEqual([]);
  });
});

describe('on Lambda', () => {
  it('needs no store', () => {
    const out = captureStreams();
    const metrics = createMetrics(lambdaConfig);

    recordRequest(metrics, state({ outcome: 'success' }), 1);
    metrics.publishStoredMetrics();

    expect(out.stdout.join('')).toContain('"Requests":1');
  });

  it('prints EMF to stdout and keeps nothing in process', () => {
    const out = captureStreams();
    const store = new LocalMetricsStore();
    const metrics = createMetrics(lambdaConfig, { store });

    recordRequest(metrics, state({ outcome: 'erp_error', errorCode: 0, upstreamMs: 12 }), 20);
    metrics.publishStoredMetrics();

    expect(store.recentRecords()).toEqual([]);
    const records = out.stdout
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    expect(records.map((r) => Object.keys(r).filter((k) => k in MetricName))).toEqual([
      ['Requests'],
      ['Errors'],
      ['UpstreamTimeouts', 'UpstreamLatency', 'ProxyOverhead'],
    ]);
    expect(records[1]).toMatchObject({ api: 'v1', code: '0', Errors: 1 });
    expect(records[2]).toMatchObject({ UpstreamLatency: 12, ProxyOverhead: 8, UpstreamTimeouts: 0 });
  });
});
