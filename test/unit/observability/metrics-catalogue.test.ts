import { describe, expect, it } from 'vitest';
import { METRIC_SPECS, MetricName, toPrometheusUnit } from '../../../lambdas/platform/metrics/catalogue.ts';

describe('metric catalogue', () => {
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
    ).toEqual([
      'erp_proxy_upstream_latency_seconds',
      'erp_proxy_proxy_overhead_seconds',
      'erp_proxy_audit_seal_lag_seconds',
      'erp_proxy_oldest_brake_age_seconds',
      'erp_proxy_license_remaining_seconds',
    ]);
  });

  it("exposes the license days (CloudWatch: LicenseDaysLeft, Count) in seconds, Prometheus's base unit", () => {
    const license = METRIC_SPECS.find((spec) => spec.name === MetricName.LicenseDaysLeft);
    if (license === undefined) throw new Error('catalogue changed');
    expect(license.unit).toBe('Count');
    expect(license.prometheusName).toMatch(/_seconds$/);
    expect(toPrometheusUnit(license, 8)).toBe(691_200);
    expect(toPrometheusUnit(license, -3)).toBe(-259_200);
    expect(toPrometheusUnit(license, 0)).toBe(0);
  });
});
