/**
 * @module platform/metrics/catalogue
 * The service's metrics as data: names, units, dimensions, how each is aggregated, its
 * Prometheus family name and help text, and the latency buckets. The recording code
 * (`record.ts`), the local store and the CloudWatch source behind `GET /_/metrics`
 * (`operator/`) and the alarms and dashboard (`lib/monitoring.ts`) all read it from here.
 *
 * Dimensions are low-cardinality only: `service` (always), `api`, and `outcome` on Requests,
 * `code` on Errors, `protocol` on UpstreamCalls, `tool` (one of the ten MCP tool names) and
 * `outcome` on McpToolCalls, Confirmations and AuditRecords, `key` (a proxy key's name) and `rule` on PolicyRefusals and Throttled,
 * and `host` on Throttled: a host `ERP_TARGET_LIMITS` names (the operator's few), or `-` for a key's
 * or person's limit. Never a host a caller chose, a database or model, nor a key: a key's name is
 * the operator's choice, one per named key, and counting refusals per caller is what the metric is
 * for.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { PROXY_ERRORS } from '../error-table.ts';

/** CloudWatch metric names. */
export const MetricName = {
  /** Count; dimensions api, outcome. */
  Requests: 'Requests',
  /**
   * Count of requests that ended with an error (proxy or ERP); dimensions api, code. `code` is
   * the error code, `license` for a license refusal, `unknown` when none was set.
   */
  Errors: 'Errors',
  /** Count of requests that ended with -32003; dimension api. */
  UpstreamTimeouts: 'UpstreamTimeouts',
  /** Milliseconds spent waiting on the ERP; dimension api. */
  UpstreamLatency: 'UpstreamLatency',
  /** Milliseconds of handler time minus upstream time; dimension api. */
  ProxyOverhead: 'ProxyOverhead',
  /** Bytes of the response body sent to the client; dimension api. */
  ResponseBytes: 'ResponseBytes',
  /**
   * Count of execute calls and MCP tool calls that reached the ERP, by the protocol that served
   * them (`jsonrpc`, `json2`); dimensions api, protocol. Shows which way the protocol bridge sends
   * calls.
   */
  UpstreamCalls: 'UpstreamCalls',
  /**
   * Days the license has left to serve calls: until it expires (negative once expired), 0 while it
   * serves none for another reason (placeholder, malformed, bad signature); no extra dimension.
   */
  LicenseDaysLeft: 'LicenseDaysLeft',
  /**
   * Count of MCP tool calls (`POST /mcp`, `tools/call`) by tool and outcome; dimensions tool,
   * outcome. The request itself is counted in `Requests` under api `mcp` too.
   */
  McpToolCalls: 'McpToolCalls',
  /**
   * Count of calls a proxy key's own policy refused (README, "Key policies"); dimensions key (the
   * key's name), rule (`api`, `access`, `model`, `method`, `target`, `database`, `field`, `company`).
   */
  PolicyRefusals: 'PolicyRefusals',
  /**
   * Count of calls the proxy's limits refused (-32004, HTTP 429; README, "Limits"); dimensions key
   * (the caller key's or identity's name), rule (`key_minute`, `person_second`, `erp_in_flight`...),
   * host (the configured ERP host of an ERP's limit, `-` otherwise).
   */
  Throttled: 'Throttled',
  /**
   * Count of calls an ERP's in-flight cap refused, by configured host alone (the ERP is saturated
   * or the cap too low): what the per-ERP alarm reads, since an alarm cannot sum over key names.
   */
  InFlightRefusals: 'InFlightRefusals',
  /**
   * Count of calls served without their limits because the store could not be asked (fail open);
   * dimension api. Alarmed.
   */
  LimitsFailedOpen: 'LimitsFailedOpen',
  /**
   * Count of calls answered from an `Idempotency-Key` record without running (a kept answer, or
   * "outcome unknown"); dimension api.
   */
  IdempotentReplays: 'IdempotentReplays',
  /**
   * Count of calls refused because of their `Idempotency-Key`: still running (-32010) or used for
   * another request (-32011); dimension api.
   */
  IdempotencyConflicts: 'IdempotencyConflicts',
  /**
   * Count of a person's confirmations of MCP writes (docs/guide/confirmations.md), by outcome (`asked`,
   * `accepted`, `declined`, `cancelled`, `expired`, `invalid`).
   */
  Confirmations: 'Confirmations',
  /** Count of audit records written (docs/guide/audit.md), by outcome (`ok`, `refused`, `asked`...). */
  AuditRecords: 'AuditRecords',
  /** Count of audit record writes that failed (a record lost, or left pending); the AuditWriteFailures alarm. */
  AuditWriteFailures: 'AuditWriteFailures',
  /** Count of audit windows sealed (docs/guide/audit.md, "Sealed"), by the sealer. */
  AuditWindowsSealed: 'AuditWindowsSealed',
  /** Minutes from the end of the last sealed window to the sealer's run; the AuditSealLagging alarm. */
  AuditSealLag: 'AuditSealLag',
  /** Problems the daily verification of the sealed windows found; the AuditVerifyFailures alarm. */
  AuditVerifyFailures: 'AuditVerifyFailures',
  /** Count of calls an operator's brake stopped (-32012); dimensions scope (kind, never a name), mode. */
  Braked: 'Braked',
  /**
   * Count of reads of the brakes that failed; dimension kept (`last`: the instance keeps the brakes
   * it last read; `none`: it never read any and serves without). The BrakesUnread alarm.
   */
  BrakesReadFailures: 'BrakesReadFailures',
  /** Minutes the oldest brake in force has been set, from the aux function's schedule; the BrakeForgotten alarm. */
  OldestBrakeAge: 'OldestBrakeAge',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

/** Dimension names. `service` is a Powertools default dimension on every record. */
export const Dimension = {
  Service: 'service',
  Api: 'api',
  Outcome: 'outcome',
  Code: 'code',
  Protocol: 'protocol',
  Tool: 'tool',
  /** A proxy key's name: few values, the operator's own (one per named key, never the key). */
  Key: 'key',
  Rule: 'rule',
  /** A brake's scope kind (`all`, `key`, `identity`, `erp`) and mode (`writes`, `all`). */
  Scope: 'scope',
  Mode: 'mode',
  /** What an instance keeps when a read of the brakes fails (`last`, `none`). */
  Kept: 'kept',
  /** A host `ERP_TARGET_LIMITS` names, or {@link NO_LIMIT_HOST}. */
  Host: 'host',
} as const;

/** The `host` dimension of a `Throttled` record for a key's or a person's limit. */
export const NO_LIMIT_HOST = '-';

/**
 * The `code` dimension value of a license refusal. The refusal's envelope code (0) is also the
 * code of every v1 ERP error, so it is counted under its own name (see `errorCodeDimension`).
 */
export const LICENSE_CODE = 'license';
/** The `code` dimension value when the chain set no error code. */
export const UNKNOWN_CODE = 'unknown';

/** How a metric is aggregated locally (and which Prometheus type it becomes). */
export type MetricKind = 'counter' | 'gauge' | 'histogram' | 'summary';

export interface MetricSpec {
  readonly name: MetricName;
  readonly unit: (typeof MetricUnit)[keyof typeof MetricUnit];
  readonly kind: MetricKind;
  /**
   * Prometheus family name, the same locally and on AWS. Counts carry no `_total` suffix: that
   * suffix names a counter, and on AWS a count is a sum over a sliding window, which goes down
   * as well as up, so both paths expose counts as gauges (see `prometheusType`).
   */
  readonly prometheusName: string;
  /**
   * What one unit of the CloudWatch metric is in the Prometheus family's base unit (`0.001`:
   * milliseconds exposed as seconds, `86400`: days as seconds); 1 when omitted. Applies to values, quantiles, `_sum` and
   * bucket bounds, never to `_count` (see `toPrometheusUnit`).
   */
  readonly prometheusScale?: number;
  /** Dimensions besides `service`, in label order. */
  readonly dimensions: readonly string[];
  /** Prometheus HELP text, in the Prometheus family's unit. */
  readonly help: string;
}

/** Every metric of the service, in exposition order. */
export const METRIC_SPECS: readonly MetricSpec[] = Object.freeze([
  {
    name: MetricName.Requests,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_requests',
    dimensions: [Dimension.Api, Dimension.Outcome],
    help: 'Requests handled, by API and outcome (success, erp_error, proxy_error).',
  },
  {
    name: MetricName.Errors,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_errors',
    dimensions: [Dimension.Api, Dimension.Code],
    help: 'Requests that ended with an error, by API and error code (proxy codes, license, ERP codes).',
  },
  {
    name: MetricName.UpstreamTimeouts,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_upstream_timeouts',
    dimensions: [Dimension.Api],
    help: `Requests that ended with ${PROXY_ERRORS.upstreamTimeout.code}: the ERP timed out or the connection broke; the call may have run.`,
  },
  {
    name: MetricName.UpstreamCalls,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_upstream_calls',
    dimensions: [Dimension.Api, Dimension.Protocol],
    help: 'Execute calls and MCP tool calls that reached the ERP, by API and the ERP protocol that served them (jsonrpc, json2).',
  },
  {
    name: MetricName.UpstreamLatency,
    unit: MetricUnit.Milliseconds,
    kind: 'histogram',
    prometheusName: 'erp_proxy_upstream_latency_seconds',
    prometheusScale: 0.001,
    dimensions: [Dimension.Api],
    help: 'Time spent waiting on the ERP per request, in seconds.',
  },
  {
    name: MetricName.ProxyOverhead,
    unit: MetricUnit.Milliseconds,
    kind: 'histogram',
    prometheusName: 'erp_proxy_proxy_overhead_seconds',
    prometheusScale: 0.001,
    dimensions: [Dimension.Api],
    help: 'Handler time minus upstream time per request, in seconds.',
  },
  {
    name: MetricName.ResponseBytes,
    unit: MetricUnit.Bytes,
    kind: 'summary',
    prometheusName: 'erp_proxy_response_bytes',
    dimensions: [Dimension.Api],
    help: 'Size of the response body sent to the client, in bytes.',
  },
  {
    name: MetricName.McpToolCalls,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_mcp_tool_calls',
    dimensions: [Dimension.Tool, Dimension.Outcome],
    help: 'MCP tool calls (POST /mcp), by tool and outcome (success, erp_error, proxy_error).',
  },
  {
    name: MetricName.PolicyRefusals,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_policy_refusals',
    dimensions: [Dimension.Key, Dimension.Rule],
    help: "Calls refused by the calling proxy key's own policy, by key name and rule (api, access, model, method, target, database, field, company).",
  },
  {
    name: MetricName.Throttled,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_throttled',
    dimensions: [Dimension.Key, Dimension.Rule, Dimension.Host],
    help: "Calls refused by the proxy's limits (-32004, HTTP 429), by key name, rule (key_minute, person_second, erp_in_flight...) and configured ERP host (- for a key's or person's limit).",
  },
  {
    name: MetricName.InFlightRefusals,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_in_flight_refusals',
    dimensions: [Dimension.Host],
    help: "Calls refused by an ERP's in-flight cap, by configured ERP host.",
  },
  {
    name: MetricName.LimitsFailedOpen,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_limits_failed_open',
    dimensions: [Dimension.Api],
    help: 'Calls served without their limits because the store could not be asked (fail open).',
  },
  {
    name: MetricName.IdempotentReplays,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_idempotent_replays',
    dimensions: [Dimension.Api],
    help: 'Calls answered from their Idempotency-Key record without running again (a kept answer, or outcome unknown), by API.',
  },
  {
    name: MetricName.IdempotencyConflicts,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_idempotency_conflicts',
    dimensions: [Dimension.Api],
    help: 'Calls refused for their Idempotency-Key: still running (-32010) or used for another request (-32011), by API.',
  },
  {
    name: MetricName.Confirmations,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_confirmations',
    dimensions: [Dimension.Outcome],
    help: "A person's confirmations of MCP writes, by outcome (asked, accepted, declined, cancelled, expired, invalid).",
  },
  {
    name: MetricName.AuditRecords,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_audit_records',
    dimensions: [Dimension.Outcome],
    help: 'Audit records of the calls that can write, by outcome (ok, erp_error, refused, asked, not_run, ran, unknown, replayed).',
  },
  {
    name: MetricName.AuditWriteFailures,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_audit_write_failures',
    dimensions: [],
    help: 'Audit record writes that failed: with AUDIT=on a call whose pending record failed was refused; a failed end leaves its record pending (read as unknown).',
  },
  {
    name: MetricName.AuditWindowsSealed,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_audit_windows_sealed',
    dimensions: [],
    help: 'Audit windows sealed.',
  },
  {
    name: MetricName.AuditSealLag,
    unit: MetricUnit.Count,
    kind: 'gauge',
    prometheusName: 'erp_proxy_audit_seal_lag_seconds',
    prometheusScale: 60,
    dimensions: [],
    help: 'Seconds since the last sealed audit window ended.',
  },
  {
    name: MetricName.AuditVerifyFailures,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_audit_verify_failures',
    dimensions: [],
    help: 'Problems the audit verification found.',
  },
  {
    name: MetricName.Braked,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_braked',
    dimensions: [Dimension.Scope, Dimension.Mode],
    help: "Calls an operator's brake stopped (-32012), by the brake's scope kind (all, key, identity, erp) and mode (writes, all).",
  },
  {
    name: MetricName.BrakesReadFailures,
    unit: MetricUnit.Count,
    kind: 'counter',
    prometheusName: 'erp_proxy_brakes_read_failures',
    dimensions: [Dimension.Kept],
    help: 'Reads of the brakes that failed, by what the instance kept (last: the brakes it last read; none: it serves without).',
  },
  {
    name: MetricName.OldestBrakeAge,
    unit: MetricUnit.Count,
    kind: 'gauge',
    prometheusName: 'erp_proxy_oldest_brake_age_seconds',
    prometheusScale: 60,
    dimensions: [],
    help: 'Seconds the oldest brake in force has been set, in whole minutes (0: none), from a schedule.',
  },
  {
    name: MetricName.LicenseDaysLeft,
    unit: MetricUnit.Count,
    kind: 'gauge',
    // Prometheus names carry base units (seconds, never days: `promtool check metrics`), so the
    // family is in seconds; CloudWatch keeps days (the LicenseExpiring alarm and the dashboard).
    prometheusName: 'erp_proxy_license_remaining_seconds',
    prometheusScale: 86_400,
    dimensions: [],
    help: 'Seconds until the license expires, in whole days (negative once expired; 0 while it serves no call: placeholder, malformed, bad signature).',
  },
] satisfies MetricSpec[]);

/**
 * The Prometheus type a metric is exposed as. Counts are gauges on both paths: a sum over the
 * last window on AWS (it goes down), a count since the process started locally (typed alike so
 * that one name has one type). Latency is a histogram locally (fixed buckets) and a summary
 * from CloudWatch (its percentiles as quantiles).
 */
export function prometheusType(
  spec: MetricSpec,
  source: 'local' | 'cloudwatch',
): 'gauge' | 'histogram' | 'summary' {
  if (spec.kind === 'counter' || spec.kind === 'gauge') return 'gauge';
  if (spec.kind === 'histogram') return source === 'local' ? 'histogram' : 'summary';
  return 'summary';
}

const SPEC_BY_NAME: ReadonlyMap<string, MetricSpec> = new Map(METRIC_SPECS.map((spec) => [spec.name, spec]));

/** The catalogue entry of a metric name, or `undefined` for a metric outside the catalogue. */
export function findMetricSpec(name: string): MetricSpec | undefined {
  return SPEC_BY_NAME.get(name);
}

/**
 * A value of `spec` (in its CloudWatch unit) in the unit of its Prometheus family: times
 * `prometheusScale`, cut to 15 significant digits so the float noise of the scaling does not
 * show (250 ms is `0.25`, 5 ms is `0.005`, not `0.005000000000000001`). Not for `_count`.
 */
export function toPrometheusUnit(spec: MetricSpec, value: number): number {
  const scale = spec.prometheusScale ?? 1;
  return scale === 1 ? value : Number((value * scale).toPrecision(15));
}

/**
 * Upper bounds (ms, the unit of the EMF values they sort) of the local latency histogram
 * buckets; `+Inf` is implied. Exposed in seconds (`le="0.005"` … `le="60"`).
 */
export const LATENCY_BUCKETS_MS: readonly number[] = Object.freeze([
  5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000,
]);
