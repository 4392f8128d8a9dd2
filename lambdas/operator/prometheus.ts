/**
 * @module operator/prometheus
 * Renders metric families as Prometheus text exposition format 0.0.4. The input is a neutral
 * structure (no Powertools, no CloudWatch types), so the local EMF aggregate and the CloudWatch
 * source feed the same renderer and the same metric names come out in both modes.
 */

/** Content type of `GET /_/metrics`. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'summary' | 'histogram';

/**
 * Suffix of a sample line: histograms have `_bucket` / `_sum` / `_count` lines, summaries
 * `_sum` / `_count` (quantile lines use no suffix and a `quantile` label).
 */
export type SampleSuffix = '' | '_bucket' | '_sum' | '_count';

export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** Appended to the family name; `''` (the default) for plain samples. */
  readonly suffix?: SampleSuffix;
}

export interface MetricFamily {
  /** Full Prometheus name, e.g. `erp_proxy_requests_total`. */
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly MetricSample[];
}

const INVALID_NAME_CHARS = /[^a-zA-Z0-9_:]/g;
const INVALID_LABEL_CHARS = /[^a-zA-Z0-9_]/g;

/** A valid metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
function metricName(name: string): string {
  const cleaned = name.replace(INVALID_NAME_CHARS, '_');
  return /^[0-9]/.test(cleaned) || cleaned === '' ? `_${cleaned}` : cleaned;
}

/** A valid label name: `[a-zA-Z_][a-zA-Z0-9_]*`. */
function labelName(name: string): string {
  const cleaned = name.replace(INVALID_LABEL_CHARS, '_');
  return /^[0-9]/.test(cleaned) || cleaned === '' ? `_${cleaned}` : cleaned;
}

/** Label values escape backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escapes backslash and line feed (a double quote stays as is). */
export function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Go-style float text: `+Inf`, `-Inf`, `NaN`, otherwise the shortest JS representation. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function formatLabels(labels: Readonly<Record<string, string>>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => `${labelName(name)}="${escapeLabelValue(value)}"`).join(',')}}`;
}

/**
 * Renders families as text exposition 0.0.4: for each family a `# HELP` and a `# TYPE` line,
 * then its samples in the given order. The result ends with a line feed. A family with no
 * samples still gets its HELP and TYPE lines, so a scraper sees every metric from the start.
 *
 * @example
 * renderPrometheus([{ name: 'erp_proxy_requests_total', help: 'Requests.', type: 'counter',
 *   samples: [{ labels: { api: 'v1' }, value: 3 }] }]);
 * // '# HELP erp_proxy_requests_total Requests.\n# TYPE erp_proxy_requests_total counter\n'
 * // + 'erp_proxy_requests_total{api="v1"} 3\n'
 */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    const name = metricName(family.name);
    // Prometheus naming rules: a `_total` name is a counter, and nothing else may use it.
    if (name.endsWith('_total') && family.type !== 'counter') {
      throw new Error(`metric family ${name} is a ${family.type}: a _total name must be a counter`);
    }
    lines.push(`# HELP ${name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${name} ${family.type}`);
    for (const sample of family.samples) {
      lines.push(
        `${name}${sample.suffix ?? ''}${formatLabels(sample.labels)} ${formatSampleValue(sample.value)}`,
      );
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
