/**
 * The `Confirmations` metric (lambdas/platform/metrics/catalogue.ts, record.ts): one count per
 * request whose confirmation ended one way, by outcome, in CloudWatch's EMF and `/_/metrics`.
 */
import { describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import { findMetricSpec } from '../../../lambdas/platform/metrics/catalogue.ts';
import { createMetrics } from '../../../lambdas/platform/metrics/powertools.ts';
import { recordRequest } from '../../../lambdas/platform/metrics/record.ts';
import { CONFIRMATION_OUTCOMES } from '../../../lambdas/platform/names.ts';

describe('the Confirmations metric', () => {
  it('counts each outcome under its own label, and nothing for a call that asked no one', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(loadConfig({}), { store });
    for (const confirmation of [...CONFIRMATION_OUTCOMES, 'asked' as const, undefined]) {
      recordRequest(metrics, { api: 'mcp', outcome: 'success', tool: 'create', confirmation }, 1);
      metrics.publishStoredMetrics();
    }
    const lines = renderPrometheus(store.families())
      .split('\n')
      .filter((line) => line.startsWith('erp_proxy_confirmations{'));
    expect(lines).toEqual([
      'erp_proxy_confirmations{outcome="accepted"} 1',
      'erp_proxy_confirmations{outcome="asked"} 2',
      'erp_proxy_confirmations{outcome="cancelled"} 1',
      'erp_proxy_confirmations{outcome="declined"} 1',
      'erp_proxy_confirmations{outcome="expired"} 1',
      'erp_proxy_confirmations{outcome="invalid"} 1',
    ]);
    const record = store
      .recentRecords()
      .map((line) => JSON.parse(line))
      .find((r) =>
        r._aws.CloudWatchMetrics[0].Metrics.some((m: { Name: string }) => m.Name === 'Confirmations'),
      );
    expect(record._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'outcome']]);
    expect(findMetricSpec('Confirmations')?.dimensions).toEqual(['outcome']);
  });
});
