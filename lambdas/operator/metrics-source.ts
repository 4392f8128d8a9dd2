/**
 * @module operator/metrics-source
 * Where `GET /_/metrics` gets its numbers: locally from the in-process EMF aggregate, on AWS
 * from CloudWatch `GetMetricData` over a recent window. Both produce the same metric families
 * (same names and labels), rendered by `prometheus.ts`.
 */
// Types only: the client is imported on the first scrape (it costs cold start; only the aux
// function on AWS ever needs it).
import type { CloudWatchClient, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import {
  CLOUDWATCH_CONNECT_TIMEOUT_MS,
  CLOUDWATCH_MAX_ATTEMPTS,
  CLOUDWATCH_REQUEST_TIMEOUT_MS,
} from '../platform/aws/cloudwatch-client-limits.ts';
import type { Config } from '../platform/config.ts';
import { KEY_POLICY_RULES } from '../platform/key-policy.ts';
import { LIMIT_RULES } from '../platform/limits.ts';
import {
  Dimension,
  LICENSE_CODE,
  METRIC_SPECS,
  MetricName,
  type MetricSpec,
  prometheusType,
  toPrometheusUnit,
  UNKNOWN_CODE,
} from '../platform/metrics/catalogue.ts';
import {
  API_NAMES,
  CONFIRMATION_OUTCOMES,
  METRICS_NAMESPACE,
  OUTCOMES,
  UPSTREAM_PROTOCOLS,
} from '../platform/names.ts';
import type { LocalMetricsStore } from './local-metrics-store.ts';
import type { MetricFamily, MetricSample, SampleSuffix } from './prometheus.ts';

/** A source of metric families for one scrape. */
export interface MetricsSource {
  snapshot(): Promise<MetricFamily[]>;
}

/**
 * The local source: the aggregate of the EMF records published into `store`, which must be the
 * store the local Metrics instance was created with (`createMetrics(config, { store })`).
 */
export function createLocalMetricsSource(store: LocalMetricsStore): MetricsSource {
  return {
    snapshot: async () => store.families(),
  };
}

// ---------------------------------------------------------------------------------------------
// CloudWatch

export type CloudWatchSourceConfig = Pick<
  Config,
  'metricsWindowSeconds' | 'metricsCacheSeconds' | 'metricsNamespace' | 'serviceName' | 'region'
>;

export interface CloudWatchSourceOptions {
  /** Clock in epoch milliseconds (tests). Default `Date.now`. */
  readonly now?: () => number;
}

/** How one query's values become a sample. */
interface QueryPlan {
  readonly metric: MetricName;
  readonly labels: Readonly<Record<string, string>>;
  readonly suffix: SampleSuffix;
  /** Sum and SampleCount add up over several datapoints; other statistics take the latest. */
  readonly reduce: 'sum' | 'latest';
  /** Emit 0 when CloudWatch has no datapoint (counts only: "nothing happened" is 0). */
  readonly zeroWhenEmpty: boolean;
}

export interface MetricDataPlan {
  readonly queries: MetricDataQuery[];
  readonly plans: ReadonlyMap<string, QueryPlan>;
  /** Id of the SEARCH query for errors by code; its results are parsed from their labels. */
  readonly errorsSearchId: string;
  /** Id of the SEARCH query for key-policy refusals by key name and rule. */
  readonly refusalsSearchId: string;
  /** Id of the SEARCH query for calls the limits refused, by key name, rule and host. */
  readonly throttledSearchId: string;
  /** Id of the SEARCH query for in-flight refusals by configured ERP host. */
  readonly inFlightSearchId: string;
  /** Id of the SEARCH query for MCP tool calls by tool and outcome. */
  readonly toolsSearchId: string;
  /** CloudWatch period, in seconds: the window rounded up to whole minutes. */
  readonly periodSeconds: number;
}

/** The plan of a count summed over the window, 0 when it has no data. */
const COUNTED = Object.freeze({ suffix: '', reduce: 'sum', zeroWhenEmpty: true } as const);
const ERRORS_SEARCH_ID = 'errors_by_code';
const REFUSALS_SEARCH_ID = 'policy_refusals';
const THROTTLED_SEARCH_ID = 'throttled';
const IN_FLIGHT_SEARCH_ID = 'in_flight_refusals';
/** Names each series of the throttled SEARCH: `agent|key_minute|-` (rule and host are the last parts). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch label syntax, not a JS template.
const THROTTLED_SEARCH_LABEL = "${PROP('Dim.key')}|${PROP('Dim.rule')}|${PROP('Dim.host')}";
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch label syntax, not a JS template.
const IN_FLIGHT_SEARCH_LABEL = "${PROP('Dim.host')}";
const TOOLS_SEARCH_ID = 'tool_calls';
/** Names each series of the tool calls SEARCH: `search_read|success`. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch label syntax, not a JS template.
const TOOLS_SEARCH_LABEL = "${PROP('Dim.tool')}|${PROP('Dim.outcome')}";
/** A tool name as the tools declare them (core/mcp/tools.ts); a label naming anything else is dropped. */
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** Names each series of the refusals SEARCH: `reporting|access` (the rule is the last part). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch label syntax, not a JS template.
const REFUSALS_SEARCH_LABEL = "${PROP('Dim.key')}|${PROP('Dim.rule')}";
/** Separates api and code in the SEARCH results' dynamic label. */
const LABEL_SEPARATOR = '|';
/** CloudWatch dynamic label naming each series the errors SEARCH returns: `v2|422`. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch label syntax, not a JS template.
const ERRORS_SEARCH_LABEL = "${PROP('Dim.api')}|${PROP('Dim.code')}";

/** Quantiles fetched for latency summaries, as CloudWatch extended statistics. */
const LATENCY_QUANTILES: readonly { readonly stat: string; readonly quantile: string }[] = [
  { stat: 'p50', quantile: '0.5' },
  { stat: 'p99', quantile: '0.99' },
];

/**
 * SEARCH terms are single-quoted and values double-quoted inside; names with quotes or
 * backslashes are not realistic service names or namespaces, so those characters are dropped
 * rather than escaped.
 */
function searchQuoted(value: string): string {
  return `"${value.replace(/["'\\]/g, '')}"`;
}

/**
 * The `GetMetricData` queries for one scrape, and how each result maps to a sample. Exported
 * for tests and for the dashboard/alarms author to see the exact series the proxy reads.
 *
 * Counters, latency and bytes are fixed `MetricStat` queries over the closed sets of `api` and
 * `outcome` values. Errors by code use one SEARCH expression instead of a fixed list of codes:
 * a fixed list would need 4 APIs × 19 known codes = 76 queries and would still miss codes
 * outside it (a v2 ERP error carries the upstream HTTP status, which can be any 4xx/5xx), so
 * those errors would silently vanish from the scrape. SEARCH returns exactly the series that
 * exist (up to 500), and a dynamic label (`${PROP('Dim.api')}|${PROP('Dim.code')}`) names each.
 */
export function buildMetricDataQueries(config: CloudWatchSourceConfig): MetricDataPlan {
  const namespace = config.metricsNamespace || METRICS_NAMESPACE;
  const periodSeconds = Math.max(60, Math.ceil(config.metricsWindowSeconds / 60) * 60);
  const queries: MetricDataQuery[] = [];
  const plans = new Map<string, QueryPlan>();

  const add = (
    id: string,
    metric: MetricName,
    dimensions: Readonly<Record<string, string>>,
    stat: string,
    plan: Omit<QueryPlan, 'metric' | 'labels'> & { labels?: Readonly<Record<string, string>> },
  ): void => {
    queries.push({
      Id: id,
      MetricStat: {
        Metric: {
          Namespace: namespace,
          MetricName: metric,
          Dimensions: [
            { Name: Dimension.Service, Value: config.serviceName },
            ...Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value })),
          ],
        },
        Period: periodSeconds,
        Stat: stat,
      },
      ReturnData: true,
    });
    plans.set(id, { ...plan, metric, labels: plan.labels ?? dimensions });
  };

  for (const api of API_NAMES) {
    const id = api.replace(/[^a-z0-9]/g, '_');
    for (const outcome of OUTCOMES) {
      add(`requests_${id}_${outcome}`, MetricName.Requests, { api, outcome }, 'Sum', {
        suffix: '',
        reduce: 'sum',
        zeroWhenEmpty: true,
      });
    }
    if (api === 'v1' || api === 'v2' || api === 'mcp') {
      for (const protocol of UPSTREAM_PROTOCOLS) {
        add(`calls_${id}_${protocol}`, MetricName.UpstreamCalls, { api, protocol }, 'Sum', {
          suffix: '',
          reduce: 'sum',
          zeroWhenEmpty: true,
        });
      }
    }
    add(`timeouts_${id}`, MetricName.UpstreamTimeouts, { api }, 'Sum', {
      suffix: '',
      reduce: 'sum',
      zeroWhenEmpty: true,
    });
    for (const [prefix, metric] of [
      ['upstream', MetricName.UpstreamLatency],
      ['overhead', MetricName.ProxyOverhead],
    ] as const) {
      for (const { stat, quantile } of LATENCY_QUANTILES) {
        add(`${prefix}_${id}_${stat}`, metric, { api }, stat, {
          labels: { api, quantile },
          suffix: '',
          reduce: 'latest',
          zeroWhenEmpty: false,
        });
      }
      add(`${prefix}_${id}_sum`, metric, { api }, 'Sum', {
        suffix: '_sum',
        reduce: 'sum',
        zeroWhenEmpty: false,
      });
      add(`${prefix}_${id}_count`, metric, { api }, 'SampleCount', {
        suffix: '_count',
        reduce: 'sum',
        zeroWhenEmpty: false,
      });
    }
    if (api === 'v1' || api === 'v2' || api === 'mcp') {
      add(`failed_open_${id}`, MetricName.LimitsFailedOpen, { api }, 'Sum', {
        suffix: '',
        reduce: 'sum',
        zeroWhenEmpty: true,
      });
    }
    add(`bytes_${id}_sum`, MetricName.ResponseBytes, { api }, 'Sum', {
      suffix: '_sum',
      reduce: 'sum',
      zeroWhenEmpty: false,
    });
    add(`bytes_${id}_count`, MetricName.ResponseBytes, { api }, 'SampleCount', {
      suffix: '_count',
      reduce: 'sum',
      zeroWhenEmpty: false,
    });
  }
  // A person's confirmations of MCP writes: a closed set of outcomes, each a series of its own.
  for (const outcome of CONFIRMATION_OUTCOMES)
    add(`confirmations_${outcome}`, MetricName.Confirmations, { outcome }, 'Sum', COUNTED);
  // The most pessimistic value in the window: an alert on "days left" should not lag.
  add('license_days_left', MetricName.LicenseDaysLeft, {}, 'Minimum', {
    suffix: '',
    reduce: 'latest',
    zeroWhenEmpty: false,
  });

  queries.push(...searchQueries(namespace, config.serviceName, periodSeconds));

  return {
    queries,
    plans,
    errorsSearchId: ERRORS_SEARCH_ID,
    refusalsSearchId: REFUSALS_SEARCH_ID,
    throttledSearchId: THROTTLED_SEARCH_ID,
    inFlightSearchId: IN_FLIGHT_SEARCH_ID,
    toolsSearchId: TOOLS_SEARCH_ID,
    periodSeconds,
  };
}

/**
 * The SEARCH queries of a scrape, for the series whose dimension values are not a closed set known
 * here: errors by API and code, key-policy refusals by key name and rule, and MCP tool calls by
 * tool and outcome (the tools are declared in core/mcp/tools.ts, which the platform layer cannot
 * read: docs/design.md, "The usual changes", an MCP tool).
 */
function searchQueries(namespace: string, serviceName: string, periodSeconds: number): MetricDataQuery[] {
  const search = (metric: MetricName, dimensions: readonly string[]): string => {
    const schema = `{${searchQuoted(namespace)},${dimensions.join(',')},${Dimension.Service}}`;
    const terms = `MetricName="${metric}" ${Dimension.Service}=${searchQuoted(serviceName)}`;
    return `SEARCH('${schema} ${terms}', 'Sum', ${periodSeconds})`;
  };
  return [
    {
      Id: ERRORS_SEARCH_ID,
      Expression: search(MetricName.Errors, [Dimension.Api, Dimension.Code]),
      Label: ERRORS_SEARCH_LABEL,
      ReturnData: true,
    },
    {
      Id: REFUSALS_SEARCH_ID,
      Expression: search(MetricName.PolicyRefusals, [Dimension.Key, Dimension.Rule]),
      Label: REFUSALS_SEARCH_LABEL,
      ReturnData: true,
    },
    {
      Id: THROTTLED_SEARCH_ID,
      Expression: search(MetricName.Throttled, [Dimension.Key, Dimension.Rule, Dimension.Host]),
      Label: THROTTLED_SEARCH_LABEL,
      ReturnData: true,
    },
    {
      Id: IN_FLIGHT_SEARCH_ID,
      Expression: search(MetricName.InFlightRefusals, [Dimension.Host]),
      Label: IN_FLIGHT_SEARCH_LABEL,
      ReturnData: true,
    },
    {
      Id: TOOLS_SEARCH_ID,
      Expression: search(MetricName.McpToolCalls, [Dimension.Tool, Dimension.Outcome]),
      Label: TOOLS_SEARCH_LABEL,
      ReturnData: true,
    },
  ];
}

function reduceValues(values: readonly number[], reduce: 'sum' | 'latest'): number | undefined {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return undefined;
  // Results are requested newest first, so the first value is the latest.
  return reduce === 'sum' ? finite.reduce((total, value) => total + value, 0) : finite[0];
}

/** `code` values that are not numbers (see `errorCodeDimension`). */
const NAMED_CODES: ReadonlySet<string> = new Set([LICENSE_CODE, UNKNOWN_CODE]);

function parseErrorsLabel(label: string | undefined): { api: string; code: string } | undefined {
  if (label === undefined) return undefined;
  const [api, code, ...rest] = label.split(LABEL_SEPARATOR);
  if (rest.length > 0 || api === undefined || code === undefined) return undefined;
  if (!(API_NAMES as readonly string[]).includes(api)) return undefined;
  if (!/^-?\d+$/.test(code) && !NAMED_CODES.has(code)) return undefined;
  return { api, code };
}

/** The key name and rule of a refusals SEARCH label; the rule is the part after the last `|`. */
function parseRefusalsLabel(label: string | undefined): { key: string; rule: string } | undefined {
  if (label === undefined) return undefined;
  const at = label.lastIndexOf(LABEL_SEPARATOR);
  if (at <= 0) return undefined;
  const rule = label.slice(at + 1);
  if (!(KEY_POLICY_RULES as readonly string[]).includes(rule)) return undefined;
  return { key: label.slice(0, at), rule };
}

/** The key name, rule and host of a throttled SEARCH label: `key|rule|host`, the key may hold `|`. */
function parseThrottledLabel(
  label: string | undefined,
): { key: string; rule: string; host: string } | undefined {
  if (label === undefined) return undefined;
  const hostAt = label.lastIndexOf(LABEL_SEPARATOR);
  if (hostAt <= 0) return undefined;
  const ruleAt = label.lastIndexOf(LABEL_SEPARATOR, hostAt - 1);
  if (ruleAt <= 0) return undefined;
  const rule = label.slice(ruleAt + 1, hostAt);
  const host = label.slice(hostAt + 1);
  if (!(LIMIT_RULES as readonly string[]).includes(rule) || host === '') return undefined;
  return { key: label.slice(0, ruleAt), rule, host };
}

/** Orders label sets by their values, in the order given. */
function byLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): number {
  const left = Object.values(a).join('\u0000');
  const right = Object.values(b).join('\u0000');
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The tool and outcome of a tool calls SEARCH label. */
function parseToolsLabel(label: string | undefined): { tool: string; outcome: string } | undefined {
  const [tool, outcome, ...rest] = (label ?? '').split(LABEL_SEPARATOR);
  if (rest.length > 0 || tool === undefined || outcome === undefined) return undefined;
  if (!TOOL_NAME.test(tool) || !(OUTCOMES as readonly string[]).includes(outcome)) return undefined;
  return { tool, outcome };
}

/** Numeric codes in numeric order, then named codes (`license`, `unknown`) alphabetically. */
function compareCodes(a: string, b: string): number {
  const left = Number(a);
  const right = Number(b);
  const leftNumeric = !NAMED_CODES.has(a);
  const rightNumeric = !NAMED_CODES.has(b);
  if (leftNumeric && rightNumeric) return left - right;
  if (leftNumeric !== rightNumeric) return leftNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Turns `GetMetricData` results into families, in catalogue order. Values, quantiles and
 * `_sum` are converted to the family's Prometheus unit (milliseconds to seconds for latency);
 * `_count` stays a count.
 */
export function familiesFromResults(
  plan: MetricDataPlan,
  results: readonly MetricDataResult[],
  windowSeconds: number,
): MetricFamily[] {
  const samples = new Map<MetricName, MetricSample[]>();
  const push = (metric: MetricName, sample: MetricSample): void => {
    const list = samples.get(metric) ?? [];
    list.push(sample);
    samples.set(metric, list);
  };
  const byId = new Map<string, MetricDataResult[]>();
  for (const result of results) {
    const id = result.Id ?? '';
    byId.set(id, [...(byId.get(id) ?? []), result]);
  }

  // Fixed queries: in query order, so samples come out grouped as Prometheus expects.
  for (const [id, queryPlan] of plan.plans) {
    const values = (byId.get(id) ?? []).flatMap((result) => result.Values ?? []);
    const value = reduceValues(values, queryPlan.reduce) ?? (queryPlan.zeroWhenEmpty ? 0 : undefined);
    if (value === undefined) continue;
    push(queryPlan.metric, { labels: queryPlan.labels, value, suffix: queryPlan.suffix });
  }

  // SEARCH results: every result whose Id is not a fixed query's (CloudWatch may or may not
  // suffix the search's Id per series), named by its dynamic label.
  const errors: { api: string; code: string; value: number }[] = [];
  const refusals: { key: string; rule: string; value: number }[] = [];
  const throttled: { labels: Record<string, string>; value: number }[] = [];
  const inFlight: { labels: Record<string, string>; value: number }[] = [];
  const tools: { tool: string; outcome: string; value: number }[] = [];
  for (const result of results) {
    const id = result.Id ?? '';
    if (plan.plans.has(id)) continue;
    if (id.startsWith(plan.throttledSearchId)) {
      const labels = parseThrottledLabel(result.Label);
      const value = reduceValues(result.Values ?? [], 'sum');
      if (labels !== undefined && value !== undefined) throttled.push({ labels, value });
      continue;
    }
    if (id.startsWith(plan.inFlightSearchId)) {
      const host = result.Label ?? '';
      const value = reduceValues(result.Values ?? [], 'sum');
      if (host !== '' && !host.includes(LABEL_SEPARATOR) && value !== undefined)
        inFlight.push({ labels: { host }, value });
      continue;
    }
    if (id.startsWith(plan.toolsSearchId)) {
      const labels = parseToolsLabel(result.Label);
      const value = reduceValues(result.Values ?? [], 'sum');
      if (labels !== undefined && value !== undefined) tools.push({ ...labels, value });
      continue;
    }
    if (id.startsWith(plan.refusalsSearchId)) {
      const labels = parseRefusalsLabel(result.Label);
      const value = reduceValues(result.Values ?? [], 'sum');
      if (labels !== undefined && value !== undefined) refusals.push({ ...labels, value });
      continue;
    }
    if (!id.startsWith(plan.errorsSearchId)) continue;
    const labels = parseErrorsLabel(result.Label);
    const value = reduceValues(result.Values ?? [], 'sum');
    if (labels === undefined || value === undefined) continue;
    errors.push({ ...labels, value });
  }
  errors.sort((a, b) => (a.api === b.api ? compareCodes(a.code, b.code) : a.api < b.api ? -1 : 1));
  for (const { api, code, value } of errors) push(MetricName.Errors, { labels: { api, code }, value });
  refusals.sort((a, b) => (a.key === b.key ? (a.rule < b.rule ? -1 : 1) : a.key < b.key ? -1 : 1));
  for (const { key, rule, value } of refusals) {
    push(MetricName.PolicyRefusals, { labels: { key, rule }, value });
  }
  for (const { labels, value } of throttled.sort((a, b) => byLabels(a.labels, b.labels)))
    push(MetricName.Throttled, { labels, value });
  for (const { labels, value } of inFlight.sort((a, b) => byLabels(a.labels, b.labels)))
    push(MetricName.InFlightRefusals, { labels, value });
  const outcomeOrder = (outcome: string): number => (OUTCOMES as readonly string[]).indexOf(outcome);
  tools.sort((a, b) =>
    a.tool === b.tool ? outcomeOrder(a.outcome) - outcomeOrder(b.outcome) : a.tool < b.tool ? -1 : 1,
  );
  for (const { tool, outcome, value } of tools)
    push(MetricName.McpToolCalls, { labels: { tool, outcome }, value });

  const window = `Over the last ${windowSeconds} s, from CloudWatch.`;
  return METRIC_SPECS.map((spec) => ({
    name: spec.prometheusName,
    help: `${spec.help} ${window}`,
    // A count over a sliding window goes up and down, so it is a gauge (rate() on a counter would
    // see false resets); latency is a summary with quantiles instead of buckets.
    type: prometheusType(spec, 'cloudwatch'),
    samples: dropEmptySummaries(spec, samples.get(spec.name) ?? []).map((sample) =>
      sample.suffix === '_count' ? sample : { ...sample, value: toPrometheusUnit(spec, sample.value) },
    ),
  }));
}

/** A summary series without a `_count` (no datapoint in the window) is left out entirely. */
function dropEmptySummaries(spec: MetricSpec, samples: MetricSample[]): MetricSample[] {
  if (spec.kind !== 'histogram' && spec.kind !== 'summary') return samples;
  const withData = new Set(
    samples.filter((s) => s.suffix === '_count' && s.value > 0).map((s) => s.labels[Dimension.Api]),
  );
  return samples.filter((s) => withData.has(s.labels[Dimension.Api]));
}

function safeErrorName(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  return /^[A-Za-z][A-Za-z0-9_.]{0,80}$/.test(name) ? name : 'UnknownError';
}

/**
 * The AWS source: one `GetMetricData` call per cache period (`config.metricsCacheSeconds`),
 * over the last `config.metricsWindowSeconds` (rounded up to whole minutes, aligned to the
 * minute). Concurrent scrapes share the call in flight. A failed call is cached for the period
 * too, so a failing CloudWatch is not called on every scrape; its error has a safe message
 * (`CloudWatch GetMetricData failed (ThrottlingException)`) with the SDK error as `cause`.
 * Counts are sums over the window, not process-lifetime totals (see `familiesFromResults`).
 */
export function createCloudWatchMetricsSource(
  config: CloudWatchSourceConfig,
  client?: CloudWatchClient,
  options: CloudWatchSourceOptions = {},
): MetricsSource {
  const now = options.now ?? Date.now;
  const plan = buildMetricDataQueries(config);
  let cloudWatch = client;
  let cached: { readonly expiresAt: number; readonly families: Promise<MetricFamily[]> } | undefined;

  const fetchFamilies = async (): Promise<MetricFamily[]> => {
    const sdk = await import('@aws-sdk/client-cloudwatch');
    cloudWatch ??= new sdk.CloudWatchClient({
      ...(config.region ? { region: config.region } : {}),
      maxAttempts: CLOUDWATCH_MAX_ATTEMPTS,
      // Without throwOnRequestTimeout, current smithy handlers only log a warning when it passes.
      requestHandler: {
        connectionTimeout: CLOUDWATCH_CONNECT_TIMEOUT_MS,
        requestTimeout: CLOUDWATCH_REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
      },
    });
    const endTime = Math.floor(now() / 60_000) * 60_000;
    let results: MetricDataResult[];
    try {
      const output = await cloudWatch.send(
        new sdk.GetMetricDataCommand({
          MetricDataQueries: plan.queries,
          StartTime: new Date(endTime - plan.periodSeconds * 1000),
          EndTime: new Date(endTime),
          ScanBy: 'TimestampDescending',
        }),
      );
      // One period per query gives at most a couple of datapoints per series, far below a
      // page; NextToken is not followed so a scrape stays one call.
      results = output.MetricDataResults ?? [];
    } catch (error) {
      throw new Error(`CloudWatch GetMetricData failed (${safeErrorName(error)})`, { cause: error });
    }
    return familiesFromResults(plan, results, config.metricsWindowSeconds);
  };

  return {
    snapshot(): Promise<MetricFamily[]> {
      const at = now();
      if (cached === undefined || at >= cached.expiresAt) {
        const families = fetchFamilies();
        // The caller handles the rejection; this only keeps a cached failure from being
        // reported as unhandled when no later scrape reads it.
        families.catch(() => {});
        cached = { expiresAt: at + config.metricsCacheSeconds * 1000, families };
      }
      return cached.families;
    },
  };
}

/**
 * The source of `GET /_/metrics` for a runtime: the local store its Metrics deliver to, or (on
 * Lambda, no store) CloudWatch, whose queries are planned on the first scrape rather than on
 * every cold start of the aux function.
 */
export function createMetricsSource(
  config: CloudWatchSourceConfig,
  store: LocalMetricsStore | undefined,
): MetricsSource {
  if (store) return createLocalMetricsSource(store);
  let cloudWatch: MetricsSource | undefined;
  return {
    snapshot: () => {
      cloudWatch ??= createCloudWatchMetricsSource(config);
      return cloudWatch.snapshot();
    },
  };
}
