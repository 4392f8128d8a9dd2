import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { createLocalMetricsSource } from '../../../lambdas/operator/metrics-source.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import { MetricName } from '../../../lambdas/platform/metrics/catalogue.ts';
import { createMetrics } from '../../../lambdas/platform/metrics/powertools.ts';
import {
  type RequestMetrics,
  recordLicenseDaysLeft,
  recordRequest,
} from '../../../lambdas/platform/metrics/record.ts';

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
      .filter((line) => /^(# (HELP|TYPE) )?erp_proxy_(requests|errors|upstream_timeouts)[ {]/.test(line))
      .join('\n');
    expect(counters).toBe(
      [
        '# HELP erp_proxy_requests Requests handled, by API and outcome (success, erp_error, proxy_error). Since the process started.',
        '# TYPE erp_proxy_requests gauge',
        'erp_proxy_requests{api="v1",outcome="proxy_error"} 1',
        'erp_proxy_requests{api="v1",outcome="success"} 1',
        'erp_proxy_requests{api="v2",outcome="erp_error"} 1',
        '# HELP erp_proxy_errors Requests that ended with an error, by API and error code (proxy codes, license, ERP codes). Since the process started.',
        '# TYPE erp_proxy_errors gauge',
        'erp_proxy_errors{api="v1",code="-32003"} 1',
        'erp_proxy_errors{api="v2",code="422"} 1',
        '# HELP erp_proxy_upstream_timeouts Requests that ended with -32003: the ERP timed out or the connection broke; the call may have run. Since the process started.',
        '# TYPE erp_proxy_upstream_timeouts gauge',
        'erp_proxy_upstream_timeouts{api="v1"} 1',
        'erp_proxy_upstream_timeouts{api="v2"} 0',
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
    // 30 days (the CloudWatch value) in seconds.
    expect(text).toContain(
      '# TYPE erp_proxy_license_remaining_seconds gauge\nerp_proxy_license_remaining_seconds 2592000\n',
    );
    expect(text).not.toContain('_days');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('needs a store for the local runtime: there is no process-wide default', () => {
    expect(() => createMetrics(localConfig)).toThrow(/local runtime needs options\.store/);
    expect(() => createMetrics(localConfig, {})).toThrow(/options\.store/);
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
