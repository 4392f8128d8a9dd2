import { CloudWatchClient, GetMetricDataCommand, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import {
  buildMetricDataQueries,
  createCloudWatchMetricsSource,
  createMetricsSource,
} from '../../../lambdas/operator/metrics-source.ts';
import { renderPrometheus } from '../../../lambdas/operator/prometheus.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';

const cloudWatch = mockClient(CloudWatchClient);

afterAll(() => {
  cloudWatch.restore();
});

beforeEach(() => {
  cloudWatch.reset();
});

const config = loadConfig({
  AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-aux',
  AWS_REGION: 'eu-west-1',
  METRICS_WINDOW_SECONDS: '300',
  METRICS_CACHE_SECONDS: '60',
});

/** 2026-11-21T10:07:30Z: the window ends at the last whole minute, 10:07:00. */
const NOW = Date.UTC(2026, 10, 21, 10, 7, 30);

function client(): CloudWatchClient {
  return new CloudWatchClient({ region: 'eu-west-1' });
}

const RESULTS: MetricDataResult[] = [
  { Id: 'requests_v1_success', Label: 'x', Values: [5, 2], StatusCode: 'Complete' },
  { Id: 'requests_v1_proxy_error', Values: [1], StatusCode: 'Complete' },
  { Id: 'timeouts_v1', Values: [1], StatusCode: 'Complete' },
  { Id: 'upstream_v1_p50', Values: [120.5, 99], StatusCode: 'Complete' },
  { Id: 'upstream_v1_p99', Values: [15000], StatusCode: 'Complete' },
  { Id: 'upstream_v1_sum', Values: [16000] },
  { Id: 'upstream_v1_count', Values: [8] },
  { Id: 'overhead_v1_p50', Values: [0.3] },
  { Id: 'overhead_v1_p99', Values: [25] },
  { Id: 'overhead_v1_sum', Values: [7.77, 5] },
  { Id: 'overhead_v1_count', Values: [8] },
  { Id: 'bytes_v1_sum', Values: [4096] },
  { Id: 'bytes_v1_count', Values: [8] },
  { Id: 'license_days_left', Values: [42] },
  { Id: 'errors_by_code', Label: 'v1|-32003', Values: [1] },
  { Id: 'errors_by_code', Label: 'v2|422', Values: [2, 1] },
  { Id: 'errors_by_code', Label: 'v1|license', Values: [4] },
  { Id: 'errors_by_code', Label: 'v1|0', Values: [2] },
  { Id: 'errors_by_code', Label: 'v1|unknown', Values: [1] },
  { Id: 'errors_by_code', Label: 'v1|other', Values: [7] },
  { Id: 'errors_by_code', Label: 'not a parsable label', Values: [9] },
  { Id: 'failed_open_v2', Values: [3] },
  { Id: 'throttled', Label: 'agent|key_minute|-', Values: [2, 1] },
  { Id: 'throttled', Label: 'a|b|erp_in_flight|erp.example.com', Values: [4] },
  { Id: 'throttled', Label: 'agent|not_a_rule|-', Values: [9] },
  { Id: 'in_flight_refusals', Label: 'erp.example.com', Values: [4] },
  { Id: 'tool_calls', Label: 'search_read|success', Values: [3, 2] },
  { Id: 'tool_calls', Label: 'create|proxy_error', Values: [1] },
  { Id: 'tool_calls', Label: 'search_read|erp_error', Values: [1] },
  { Id: 'tool_calls', Label: 'search_read|lost', Values: [8] },
  { Id: 'tool_calls', Label: 'Not A Tool|success', Values: [8] },
];

describe('CloudWatch metrics source', () => {
  it('asks GetMetricData for the right series over an aligned window', async () => {
    // Prepare
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: RESULTS });
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });

    // Act
    await source.snapshot();

    // Assess
    const calls = cloudWatch.commandCalls(GetMetricDataCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]?.args[0].input;
    expect(input?.EndTime).toEqual(new Date(Date.UTC(2026, 10, 21, 10, 7, 0)));
    expect(input?.StartTime).toEqual(new Date(Date.UTC(2026, 10, 21, 10, 2, 0)));
    expect(input?.ScanBy).toBe('TimestampDescending');
    const queries = input?.MetricDataQueries ?? [];
    expect(queries.length).toBeLessThanOrEqual(500);
    expect(new Set(queries.map((q) => q.Id)).size).toBe(queries.length);
    for (const query of queries) expect(query.Id).toMatch(/^[a-z][a-zA-Z0-9_]*$/);

    expect(queries).toContainEqual({
      Id: 'requests_v2_erp_error',
      MetricStat: {
        Metric: {
          Namespace: 'ErpProxy',
          MetricName: 'Requests',
          Dimensions: [
            { Name: 'service', Value: 'erp-proxy' },
            { Name: 'api', Value: 'v2' },
            { Name: 'outcome', Value: 'erp_error' },
          ],
        },
        Period: 300,
        Stat: 'Sum',
      },
      ReturnData: true,
    });
    const stats = (prefix: string) =>
      queries
        .filter((q) => q.Id?.startsWith(prefix))
        .map((q) => [q.MetricStat?.Metric?.MetricName, q.MetricStat?.Stat]);
    expect(stats('upstream_version_')).toEqual([
      ['UpstreamLatency', 'p50'],
      ['UpstreamLatency', 'p99'],
      ['UpstreamLatency', 'Sum'],
      ['UpstreamLatency', 'SampleCount'],
    ]);
    expect(stats('overhead_aux_').map(([name]) => name)).toEqual(Array(4).fill('ProxyOverhead'));
    expect(stats('timeouts_')).toEqual(Array(5).fill(['UpstreamTimeouts', 'Sum']));
    expect(stats('requests_')).toHaveLength(15);
    // The MCP function: its API like the others, and each tool by outcome in one SEARCH (the
    // tools are declared in core/mcp/tools.ts; no list of them is kept here).
    expect(stats('upstream_mcp_').map(([name]) => name)).toEqual(Array(4).fill('UpstreamLatency'));
    expect(stats('calls_mcp_')).toEqual(Array(2).fill(['UpstreamCalls', 'Sum']));
    expect(queries.filter((q) => q.MetricStat?.Metric?.MetricName === 'McpToolCalls')).toEqual([]);
    expect(queries).toContainEqual({
      Id: 'tool_calls',
      Expression: `SEARCH('{"ErpProxy",tool,outcome,service} MetricName="McpToolCalls" service="erp-proxy"', 'Sum', 300)`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch dynamic label syntax.
      Label: "${PROP('Dim.tool')}|${PROP('Dim.outcome')}",
      ReturnData: true,
    });
    expect(stats('license_days_left')).toEqual([['LicenseDaysLeft', 'Minimum']]);
    expect(queries.find((q) => q.Id === 'license_days_left')?.MetricStat?.Metric?.Dimensions).toEqual([
      { Name: 'service', Value: 'erp-proxy' },
    ]);
    expect(queries).toContainEqual({
      Id: 'errors_by_code',
      Expression: `SEARCH('{"ErpProxy",api,code,service} MetricName="Errors" service="erp-proxy"', 'Sum', 300)`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch dynamic label syntax.
      Label: "${PROP('Dim.api')}|${PROP('Dim.code')}",
      ReturnData: true,
    });
  });

  it('reads the limits: refusals by key, rule and host and in-flight refusals by host (SEARCH), calls served without limits by API', async () => {
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: RESULTS });
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });

    const text = renderPrometheus(await source.snapshot());

    const queries = cloudWatch.commandCalls(GetMetricDataCommand)[0]?.args[0].input.MetricDataQueries ?? [];
    expect(queries).toContainEqual({
      Id: 'throttled',
      Expression: `SEARCH('{"ErpProxy",key,rule,host,service} MetricName="Throttled" service="erp-proxy"', 'Sum', 300)`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch dynamic label syntax.
      Label: "${PROP('Dim.key')}|${PROP('Dim.rule')}|${PROP('Dim.host')}",
      ReturnData: true,
    });
    expect(queries.filter((q) => q.Id?.startsWith('failed_open_')).map((q) => q.Id)).toEqual([
      'failed_open_v1',
      'failed_open_v2',
      'failed_open_mcp',
    ]);
    expect(text).toContain(
      [
        '# TYPE erp_proxy_throttled gauge',
        'erp_proxy_throttled{key="agent",rule="key_minute",host="-"} 3',
        'erp_proxy_throttled{key="a|b",rule="erp_in_flight",host="erp.example.com"} 4',
        '# HELP',
      ].join('\n'),
    );
    expect(text).not.toContain('not_a_rule');
    expect(text).toContain('erp_proxy_in_flight_refusals{host="erp.example.com"} 4\n');
    expect(text).toContain('erp_proxy_limits_failed_open{api="v2"} 3\n');
    expect(text).toContain('erp_proxy_limits_failed_open{api="mcp"} 0\n');
  });

  it("reads a person's confirmations by outcome, each a series of its own (0 when CloudWatch has none)", async () => {
    cloudWatch.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        ...RESULTS,
        { Id: 'confirmations_declined', Values: [2], Timestamps: [new Date(NOW)] },
      ],
    });
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });
    const text = renderPrometheus(await source.snapshot());
    const queries = cloudWatch.commandCalls(GetMetricDataCommand)[0]?.args[0].input.MetricDataQueries ?? [];
    expect(queries.filter((q) => q.Id?.startsWith('confirmations_')).map((q) => q.Id)).toEqual([
      'confirmations_asked',
      'confirmations_accepted',
      'confirmations_declined',
      'confirmations_cancelled',
      'confirmations_expired',
      'confirmations_invalid',
    ]);
    expect(text).toContain('erp_proxy_confirmations{outcome="declined"} 2\n');
    expect(text).toContain('erp_proxy_confirmations{outcome="asked"} 0\n');
  });

  it('rounds the window up to whole minutes', () => {
    const plan = buildMetricDataQueries({ ...config, metricsWindowSeconds: 90 });
    expect(plan.periodSeconds).toBe(120);
    expect(plan.queries.every((q) => q.MetricStat === undefined || q.MetricStat.Period === 120)).toBe(true);
  });

  it('maps results to the same metric names as locally, as window gauges and summaries', async () => {
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: RESULTS });
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });

    const text = renderPrometheus(await source.snapshot());

    expect(text).toContain('# TYPE erp_proxy_requests gauge\n');
    expect(text).toContain('erp_proxy_requests{api="v1",outcome="success"} 7\n');
    expect(text).toContain('erp_proxy_requests{api="v1",outcome="proxy_error"} 1\n');
    expect(text).toContain('erp_proxy_requests{api="aux",outcome="erp_error"} 0\n');
    expect(text).toContain(
      [
        '# TYPE erp_proxy_errors gauge',
        'erp_proxy_errors{api="v1",code="-32003"} 1',
        'erp_proxy_errors{api="v1",code="0"} 2',
        'erp_proxy_errors{api="v1",code="license"} 4',
        'erp_proxy_errors{api="v1",code="unknown"} 1',
        'erp_proxy_errors{api="v2",code="422"} 3',
        '# HELP',
      ].join('\n'),
    );
    expect(text).toContain('erp_proxy_upstream_timeouts{api="v1"} 1\n');
    expect(text).toContain(
      [
        '# HELP erp_proxy_upstream_latency_seconds Time spent waiting on the ERP per request, in seconds. Over the last 300 s, from CloudWatch.',
        '# TYPE erp_proxy_upstream_latency_seconds summary',
        'erp_proxy_upstream_latency_seconds{api="v1",quantile="0.5"} 0.1205',
        'erp_proxy_upstream_latency_seconds{api="v1",quantile="0.99"} 15',
        'erp_proxy_upstream_latency_seconds_sum{api="v1"} 16',
        'erp_proxy_upstream_latency_seconds_count{api="v1"} 8',
        '# HELP erp_proxy_proxy_overhead_seconds Handler time minus upstream time per request, in seconds. Over the last 300 s, from CloudWatch.',
        '# TYPE erp_proxy_proxy_overhead_seconds summary',
        'erp_proxy_proxy_overhead_seconds{api="v1",quantile="0.5"} 0.0003',
        'erp_proxy_proxy_overhead_seconds{api="v1",quantile="0.99"} 0.025',
        'erp_proxy_proxy_overhead_seconds_sum{api="v1"} 0.01277',
        'erp_proxy_proxy_overhead_seconds_count{api="v1"} 8',
        '# HELP erp_proxy_response_bytes',
      ].join('\n'),
    );
    expect(text).not.toContain('_milliseconds');
    expect(text).toContain(
      'erp_proxy_response_bytes_sum{api="v1"} 4096\nerp_proxy_response_bytes_count{api="v1"} 8\n',
    );
    // 42 days (CloudWatch's Minimum) in seconds.
    expect(text).toContain(
      '# TYPE erp_proxy_license_remaining_seconds gauge\nerp_proxy_license_remaining_seconds 3628800\n',
    );
    expect(text).not.toContain('_days');
    expect(text).toContain('Over the last 300 s, from CloudWatch.');
    expect(text).not.toContain('not a parsable label');
    expect(text).not.toContain('code="other"');
    // Tool calls from the SEARCH, by tool then outcome; a label that is no tool and outcome is dropped.
    expect(text).toContain(
      [
        '# TYPE erp_proxy_mcp_tool_calls gauge',
        'erp_proxy_mcp_tool_calls{tool="create",outcome="proxy_error"} 1',
        'erp_proxy_mcp_tool_calls{tool="search_read",outcome="success"} 5',
        'erp_proxy_mcp_tool_calls{tool="search_read",outcome="erp_error"} 1',
        '# HELP',
      ].join('\n'),
    );
    expect(text).not.toContain('outcome="lost"');
    expect(text).not.toContain('Not A Tool');
  });

  it('serves scrapes within the cache period from one call, and calls again after it', async () => {
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: RESULTS });
    let now = NOW;
    const source = createCloudWatchMetricsSource(config, client(), { now: () => now });

    const first = await source.snapshot();
    now += 59_000;
    const second = await source.snapshot();
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(1);
    expect(second).toBe(first);

    now += 1_000;
    await source.snapshot();
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(2);
  });

  it('shares one in-flight call between concurrent scrapes', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    cloudWatch.on(GetMetricDataCommand).callsFake(async () => {
      await gate;
      return { MetricDataResults: RESULTS };
    });
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });

    const scrapes = [source.snapshot(), source.snapshot(), source.snapshot()];
    release();
    const results = await Promise.all(scrapes);

    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(1);
    expect(results[1]).toBe(results[0]);
    expect(results[2]).toBe(results[0]);
  });

  it('turns a failing call into an Error with a safe message, not retried within the period', async () => {
    const denied = Object.assign(
      new Error('User: arn:aws:sts::123456789012:assumed-role/x is not authorized to perform GetMetricData'),
      { name: 'AccessDeniedException' },
    );
    cloudWatch.on(GetMetricDataCommand).rejects(denied);
    const source = createCloudWatchMetricsSource(config, client(), { now: () => NOW });

    const failure = await source.snapshot().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('CloudWatch GetMetricData failed (AccessDeniedException)');
    expect((failure as Error).message).not.toContain('123456789012');
    await expect(source.snapshot()).rejects.toThrow('CloudWatch GetMetricData failed');
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(1);
  });
});

describe('the metrics source of a runtime', () => {
  it('on Lambda (no local store): CloudWatch, asked on the first scrape and not before', async () => {
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: RESULTS });
    const source = createMetricsSource(config, undefined);
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(0);

    const families = await source.snapshot();
    expect(families.map((family) => family.name)).toContain('erp_proxy_requests');
    await source.snapshot();
    // The same source afterwards: its cache serves the second scrape.
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(1);
  });

  it('locally: the store the Metrics instance delivers to, never CloudWatch', async () => {
    const store = new LocalMetricsStore();
    const source = createMetricsSource(config, store);
    expect(await source.snapshot()).toEqual(store.families());
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(0);
  });
});
