import { describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import { createMetrics } from '../../../lambdas/platform/metrics/powertools.ts';
import { type RequestMetrics, recordRequest, roundMs } from '../../../lambdas/platform/metrics/record.ts';

function state(overrides: Partial<RequestMetrics> & Pick<RequestMetrics, 'outcome'>): RequestMetrics {
  return { api: 'v1', ...overrides };
}

const localConfig = loadConfig({});

describe('request records', () => {
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
    const errors = text.split('\n').filter((line) => line.startsWith('erp_proxy_errors{'));
    expect(errors).toEqual([
      'erp_proxy_errors{api="aux",code="unknown"} 1',
      'erp_proxy_errors{api="v1",code="0"} 2',
      'erp_proxy_errors{api="v1",code="license"} 1',
    ]);
  });

  it('counts limit refusals by key, rule and host, in-flight refusals by host, and calls served without their limits', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });
    const refused = { outcome: 'proxy_error', errorCode: -32004, callerKeyName: 'agent' } as const;
    recordRequest(metrics, state({ ...refused, limitRule: 'key_minute' }), 1);
    recordRequest(
      metrics,
      state({ ...refused, limitRule: 'erp_in_flight', limitHost: 'erp.example.com' }),
      1,
    );
    recordRequest(
      metrics,
      state({ ...refused, limitRule: 'erp_in_flight', limitHost: 'erp.example.com' }),
      1,
    );
    recordRequest(metrics, state({ api: 'v2', outcome: 'success', limitsFailedOpen: true }), 1);
    // A refusal by the ERP side (503) is no limit's.
    recordRequest(metrics, state({ outcome: 'proxy_error', errorCode: -32004, callerKeyName: 'agent' }), 1);
    metrics.publishStoredMetrics();

    const lines = renderPrometheus(store.families()).split('\n');
    expect(lines.filter((line) => line.startsWith('erp_proxy_throttled{'))).toEqual([
      'erp_proxy_throttled{key="agent",rule="erp_in_flight",host="erp.example.com"} 2',
      'erp_proxy_throttled{key="agent",rule="key_minute",host="-"} 1',
    ]);
    expect(lines.filter((line) => line.startsWith('erp_proxy_in_flight_refusals{'))).toEqual([
      'erp_proxy_in_flight_refusals{host="erp.example.com"} 2',
    ]);
    expect(lines.filter((line) => line.startsWith('erp_proxy_limits_failed_open{'))).toEqual([
      'erp_proxy_limits_failed_open{api="v2"} 1',
    ]);
  });

  it('counts Idempotency-Key replays and conflicts by API, and nothing for a first call', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(localConfig, { store });
    const record = (api: 'v1' | 'v2', idempotency: RequestMetrics['idempotency']) => {
      recordRequest(metrics, state({ api, outcome: 'success', idempotency }), 1);
      metrics.publishStoredMetrics();
    };
    record('v1', 'replayed');
    record('v1', 'unknown_replayed');
    record('v2', 'in_progress');
    record('v2', 'key_reused');
    record('v2', 'recorded');
    record('v2', 'not_kept');

    const text = renderPrometheus(store.families());
    const lines = (prefix: string) => text.split('\n').filter((line) => line.startsWith(`${prefix}{`));
    expect(lines('erp_proxy_idempotent_replays')).toEqual(['erp_proxy_idempotent_replays{api="v1"} 2']);
    expect(lines('erp_proxy_idempotency_conflicts')).toEqual(['erp_proxy_idempotency_conflicts{api="v2"} 2']);
  });

  it('rounds milliseconds to a hundredth', () => {
    expect(roundMs(12.3449)).toBe(12.34);
    expect(roundMs(0.004)).toBe(0);
    expect(roundMs(15000)).toBe(15000);
  });
});
