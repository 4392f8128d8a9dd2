import { describe, expect, it } from 'vitest';
import {
  escapeHelp,
  escapeLabelValue,
  type MetricFamily,
  PROMETHEUS_CONTENT_TYPE,
  renderPrometheus,
} from '../../../lambdas/operator/prometheus.ts';

describe('renderPrometheus', () => {
  it('renders a small fixture exactly', () => {
    // Prepare
    const families: MetricFamily[] = [
      {
        name: 'erp_proxy_requests_total',
        help: 'Requests handled.',
        type: 'counter',
        samples: [
          { labels: { api: 'v1', outcome: 'success' }, value: 3 },
          { labels: { api: 'v2', outcome: 'proxy_error' }, value: 1 },
        ],
      },
      {
        name: 'erp_proxy_errors_total',
        help: 'Errors by code.',
        type: 'counter',
        samples: [{ labels: { api: 'v1', code: '-32003' }, value: 1 }],
      },
      {
        name: 'erp_proxy_upstream_latency_seconds',
        help: 'Upstream latency.',
        type: 'histogram',
        samples: [
          { labels: { api: 'v1', le: '0.1' }, value: 1, suffix: '_bucket' },
          { labels: { api: 'v1', le: '+Inf' }, value: 2, suffix: '_bucket' },
          { labels: { api: 'v1' }, value: 1.2505, suffix: '_sum' },
          { labels: { api: 'v1' }, value: 2, suffix: '_count' },
        ],
      },
      {
        name: 'erp_proxy_license_remaining_seconds',
        help: 'Seconds left.',
        type: 'gauge',
        samples: [{ labels: {}, value: -172800 }],
      },
      { name: 'erp_proxy_response_bytes', help: 'Bytes.', type: 'summary', samples: [] },
    ];

    // Act
    const text = renderPrometheus(families);

    // Assess
    expect(text).toBe(
      [
        '# HELP erp_proxy_requests_total Requests handled.',
        '# TYPE erp_proxy_requests_total counter',
        'erp_proxy_requests_total{api="v1",outcome="success"} 3',
        'erp_proxy_requests_total{api="v2",outcome="proxy_error"} 1',
        '# HELP erp_proxy_errors_total Errors by code.',
        '# TYPE erp_proxy_errors_total counter',
        'erp_proxy_errors_total{api="v1",code="-32003"} 1',
        '# HELP erp_proxy_upstream_latency_seconds Upstream latency.',
        '# TYPE erp_proxy_upstream_latency_seconds histogram',
        'erp_proxy_upstream_latency_seconds_bucket{api="v1",le="0.1"} 1',
        'erp_proxy_upstream_latency_seconds_bucket{api="v1",le="+Inf"} 2',
        'erp_proxy_upstream_latency_seconds_sum{api="v1"} 1.2505',
        'erp_proxy_upstream_latency_seconds_count{api="v1"} 2',
        '# HELP erp_proxy_license_remaining_seconds Seconds left.',
        '# TYPE erp_proxy_license_remaining_seconds gauge',
        'erp_proxy_license_remaining_seconds -172800',
        '# HELP erp_proxy_response_bytes Bytes.',
        '# TYPE erp_proxy_response_bytes summary',
        '',
      ].join('\n'),
    );
  });

  it('escapes label values (backslash, double quote, line feed) and HELP text (backslash, line feed)', () => {
    const text = renderPrometheus([
      {
        name: 'erp_proxy_x',
        help: 'a \\ back\nslash and "quotes"',
        type: 'gauge',
        samples: [{ labels: { v: 'C:\\path "quoted"\nnext' }, value: 1 }],
      },
    ]);
    expect(text).toBe(
      [
        '# HELP erp_proxy_x a \\\\ back\\nslash and "quotes"',
        '# TYPE erp_proxy_x gauge',
        'erp_proxy_x{v="C:\\\\path \\"quoted\\"\\nnext"} 1',
        '',
      ].join('\n'),
    );
    expect(escapeLabelValue('\\"\n')).toBe('\\\\\\"\\n');
    expect(escapeHelp('"\\\n')).toBe('"\\\\\\n');
  });

  it('writes special float values the Prometheus way and sanitizes names', () => {
    const text = renderPrometheus([
      {
        name: 'bad-name',
        help: 'h',
        type: 'gauge',
        samples: [
          { labels: { 'label-x': 'a' }, value: Number.POSITIVE_INFINITY },
          { labels: {}, value: Number.NEGATIVE_INFINITY },
          { labels: {}, value: Number.NaN },
        ],
      },
    ]);
    expect(text).toBe(
      '# HELP bad_name h\n# TYPE bad_name gauge\nbad_name{label_x="a"} +Inf\nbad_name -Inf\nbad_name NaN\n',
    );
  });

  it('has the text exposition 0.0.4 content type', () => {
    expect(PROMETHEUS_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(renderPrometheus([])).toBe('');
  });
});
