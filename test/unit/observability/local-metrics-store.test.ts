import { describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import { LATENCY_BUCKETS_MS, METRIC_SPECS } from '../../../lambdas/platform/metrics/catalogue.ts';
import { createMetrics } from '../../../lambdas/platform/metrics/powertools.ts';
import { type RequestMetrics, recordRequest } from '../../../lambdas/platform/metrics/record.ts';

function state(overrides: Partial<RequestMetrics> & Pick<RequestMetrics, 'outcome'>): RequestMetrics {
  return { api: 'v1', ...overrides };
}

const localConfig = loadConfig({});

describe('LocalMetricsStore', () => {
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
    // 8 days left (the CloudWatch value), in seconds for Prometheus.
    expect(families.find((f) => f.name === 'erp_proxy_license_remaining_seconds')?.samples).toEqual([
      { labels: {}, value: 8 * 86_400 },
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
});
