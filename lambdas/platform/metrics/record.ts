/**
 * @module platform/metrics/record
 * Records one request's metrics (and the license's days left) on a Powertools `Metrics`
 * instance, with the names and dimensions of the catalogue. The observe middleware calls
 * `recordRequest` once per request and publishes right after.
 */

import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AuditOutcome } from '../audit/audit-record.ts';
import { PROXY_ERRORS } from '../error-table.ts';
import type { KeyPolicyRule } from '../key-policy.ts';
import type { LicenseStatus } from '../license.ts';
import type { LimitRule } from '../limits.ts';
import type {
  ApiName,
  ConfirmationOutcome,
  IdempotencyOutcome,
  Outcome,
  UpstreamProtocol,
} from '../names.ts';
import { Dimension, LICENSE_CODE, MetricName, NO_LIMIT_HOST, UNKNOWN_CODE } from './catalogue.ts';

/**
 * The `code` dimension value of a failed request. A license refusal and a v1 ERP error both
 * carry code 0 in the envelope; the outcome tells them apart, so the refusal is counted as
 * `license` (outcome `proxy_error`) and the ERP error stays `0` (outcome `erp_error`). Otherwise
 * the error code itself, or `unknown` when the chain did not set one.
 */
export function errorCodeDimension(outcome: Outcome, code: number | undefined): string {
  if (code === undefined || !Number.isInteger(code)) return UNKNOWN_CODE;
  if (code === PROXY_ERRORS.license.code && outcome === 'proxy_error') return LICENSE_CODE;
  return String(code);
}

/** Milliseconds rounded to a hundredth, for log fields and metric values alike. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/**
 * What one request's metrics are made of: the request's facts (`core/request-facts.ts`) the
 * metrics read. `outcome` is required: the envelope helpers always return it, and the observe
 * middleware supplies the one fallback when a chain did not.
 */
export interface RequestMetrics {
  readonly api: ApiName;
  readonly outcome: Outcome;
  readonly errorCode?: number;
  /** Milliseconds spent waiting on the upstream (sum over calls). */
  readonly upstreamMs?: number;
  /** Size of the response body sent to the client. */
  readonly responseBytes?: number;
  /** The ERP protocol that served the call, when it reached the ERP. */
  readonly upstreamProtocol?: UpstreamProtocol;
  /**
   * The MCP tool the request called (`POST /mcp`, `tools/call` of a known tool): one of the tools
   * declared in core/mcp/tools.ts (`McpToolName` there; this layer cannot import it).
   */
  readonly tool?: string;
  /** The name of the proxy key that authenticated the caller. */
  readonly callerKeyName?: string;
  /** The rule of that key's policy that refused the call. */
  readonly policyRule?: KeyPolicyRule;
  /** The limit that refused the call, and its configured ERP host (an ERP's limit). */
  readonly limitRule?: LimitRule;
  readonly limitHost?: string;
  /** Limits applied but the store could not be asked: the call was served. */
  readonly limitsFailedOpen?: boolean;
  /** What the call's `Idempotency-Key` did (`core/request-facts.ts`). */
  readonly idempotency?: IdempotencyOutcome;
  /** How a person's confirmation of an MCP write ended (`core/request-facts.ts`). */
  readonly confirmation?: ConfirmationOutcome;
  /** The operator's brake that stopped the call (-32012): its scope kind and mode. */
  readonly brake?: { readonly scope: string; readonly mode: string };
  /** The outcome of the call's audit record, and how many of its writes failed. */
  readonly auditOutcome?: AuditOutcome;
  readonly auditWriteFailures?: number;
}

/** The metric an `Idempotency-Key` outcome counts in, if any. */
function idempotencyMetricOf(outcome: IdempotencyOutcome | undefined): MetricName | undefined {
  if (outcome === 'replayed' || outcome === 'unknown_replayed') return MetricName.IdempotentReplays;
  if (outcome === 'in_progress' || outcome === 'key_reused') return MetricName.IdempotencyConflicts;
  return undefined;
}

/** The single-metric emitters of one `Metrics` instance, each created on first use and reused. */
type SingleRecordKind =
  | 'requests'
  | 'errors'
  | 'license'
  | 'upstreamCalls'
  | 'toolCalls'
  | 'policyRefusals'
  | 'throttled'
  | 'inFlightRefusals'
  | 'failedOpen'
  | 'idempotency'
  | 'confirmations'
  | 'auditRecords'
  | 'auditFailures'
  | 'auditSealing'
  | 'braked'
  | 'brakes';

const singleRecordsOf = new WeakMap<Metrics, Partial<Record<SingleRecordKind, Metrics>>>();

/**
 * Powertools' `singleMetric()` builds a whole new `Metrics` (environment reads, a new Console):
 * measured at about a third of the proxy's per-request overhead when called twice per request.
 * A single-metric instance publishes and clears its metrics and dimensions on every
 * `addMetric`, so one per record kind is created, on its first record (a first request that
 * succeeds never builds the errors one), and reused.
 */
function singleRecord(metrics: Metrics, kind: SingleRecordKind): Metrics {
  let records = singleRecordsOf.get(metrics);
  if (!records) {
    records = {};
    singleRecordsOf.set(metrics, records);
  }
  records[kind] ??= metrics.singleMetric();
  return records[kind];
}

/**
 * Records one request's metrics. `Requests` (with `outcome`) and `Errors` (with `code`) are
 * single-metric records, because a dimension set in EMF applies to every metric of a record and
 * those two dimensions belong to those metrics only. The per-API metrics (timeouts, latency,
 * overhead, bytes) are stored on `metrics` under `{service, api}`; the caller publishes them
 * with `metrics.publishStoredMetrics()` right after, in the same tick, so requests running
 * concurrently in the local server cannot mix their stored metrics.
 *
 * @example
 * recordRequest(metrics, { api: 'v1', outcome: 'success', upstreamMs: 40, responseBytes: 300 }, 50);
 * metrics.publishStoredMetrics();
 */
export function recordRequest(metrics: Metrics, state: RequestMetrics, durationMs: number): void {
  const { api, outcome } = state;

  singleRecord(metrics, 'requests')
    .addDimension(Dimension.Api, api)
    .addDimension(Dimension.Outcome, outcome)
    .addMetric(MetricName.Requests, MetricUnit.Count, 1);

  if (outcome !== 'success') {
    singleRecord(metrics, 'errors')
      .addDimension(Dimension.Api, api)
      .addDimension(Dimension.Code, errorCodeDimension(outcome, state.errorCode))
      .addMetric(MetricName.Errors, MetricUnit.Count, 1);
  }

  if (state.upstreamProtocol !== undefined) {
    singleRecord(metrics, 'upstreamCalls')
      .addDimension(Dimension.Api, api)
      .addDimension(Dimension.Protocol, state.upstreamProtocol)
      .addMetric(MetricName.UpstreamCalls, MetricUnit.Count, 1);
  }

  if (state.tool !== undefined) {
    singleRecord(metrics, 'toolCalls')
      .addDimension(Dimension.Tool, state.tool)
      .addDimension(Dimension.Outcome, outcome)
      .addMetric(MetricName.McpToolCalls, MetricUnit.Count, 1);
  }

  if (state.policyRule !== undefined && state.callerKeyName !== undefined) {
    singleRecord(metrics, 'policyRefusals')
      .addDimension(Dimension.Key, state.callerKeyName)
      .addDimension(Dimension.Rule, state.policyRule)
      .addMetric(MetricName.PolicyRefusals, MetricUnit.Count, 1);
  }

  if (state.limitRule !== undefined && state.callerKeyName !== undefined) {
    const host = state.limitHost ?? NO_LIMIT_HOST;
    singleRecord(metrics, 'throttled')
      .addDimension(Dimension.Key, state.callerKeyName)
      .addDimension(Dimension.Rule, state.limitRule)
      .addDimension(Dimension.Host, host)
      .addMetric(MetricName.Throttled, MetricUnit.Count, 1);
    if (state.limitRule === 'erp_in_flight')
      singleRecord(metrics, 'inFlightRefusals')
        .addDimension(Dimension.Host, host)
        .addMetric(MetricName.InFlightRefusals, MetricUnit.Count, 1);
  }

  if (state.brake !== undefined) {
    singleRecord(metrics, 'braked')
      .addDimension(Dimension.Scope, state.brake.scope)
      .addDimension(Dimension.Mode, state.brake.mode)
      .addMetric(MetricName.Braked, MetricUnit.Count, 1);
  }

  if (state.limitsFailedOpen === true) {
    singleRecord(metrics, 'failedOpen')
      .addDimension(Dimension.Api, api)
      .addMetric(MetricName.LimitsFailedOpen, MetricUnit.Count, 1);
  }

  const idempotencyMetric = idempotencyMetricOf(state.idempotency);
  if (idempotencyMetric !== undefined) {
    singleRecord(metrics, 'idempotency')
      .addDimension(Dimension.Api, api)
      .addMetric(idempotencyMetric, MetricUnit.Count, 1);
  }

  if (state.confirmation !== undefined) {
    singleRecord(metrics, 'confirmations')
      .addDimension(Dimension.Outcome, state.confirmation)
      .addMetric(MetricName.Confirmations, MetricUnit.Count, 1);
  }

  if (state.auditOutcome !== undefined) {
    singleRecord(metrics, 'auditRecords')
      .addDimension(Dimension.Outcome, state.auditOutcome)
      .addMetric(MetricName.AuditRecords, MetricUnit.Count, 1);
  }
  if (state.auditWriteFailures !== undefined && state.auditWriteFailures > 0) {
    singleRecord(metrics, 'auditFailures').addMetric(
      MetricName.AuditWriteFailures,
      MetricUnit.Count,
      state.auditWriteFailures,
    );
  }

  const upstreamMs =
    state.upstreamMs !== undefined && Number.isFinite(state.upstreamMs) ? state.upstreamMs : undefined;
  metrics.addDimension(Dimension.Api, api);
  // Always emitted (0 or 1), so the timeout alarm and the counter have data even when all is well.
  const timedOut = state.errorCode === PROXY_ERRORS.upstreamTimeout.code;
  metrics.addMetric(MetricName.UpstreamTimeouts, MetricUnit.Count, timedOut ? 1 : 0);
  if (upstreamMs !== undefined) {
    metrics.addMetric(MetricName.UpstreamLatency, MetricUnit.Milliseconds, roundMs(upstreamMs));
  }
  metrics.addMetric(
    MetricName.ProxyOverhead,
    MetricUnit.Milliseconds,
    roundMs(Math.max(0, durationMs - (upstreamMs ?? 0))),
  );
  if (state.responseBytes !== undefined && Number.isFinite(state.responseBytes)) {
    metrics.addMetric(MetricName.ResponseBytes, MetricUnit.Bytes, state.responseBytes);
  }
}

/**
 * The `LicenseDaysLeft` value of a license status: the days the license has left to serve calls.
 * A valid license's days left (0 on its last day); an expired one's, negative; 0 for a license
 * that serves no call for another reason (the placeholder, a malformed document, a missing or bad
 * signature), whatever its date says, so that the expiry alarm fires for it too.
 *
 * @example
 * licenseDaysLeftValue({ is_valid: false, days_left: null }) // 0 (placeholder or malformed)
 * licenseDaysLeftValue({ is_valid: false, days_left: -3 }) // -3 (expired 3 days ago)
 */
export function licenseDaysLeftValue(status: Pick<LicenseStatus, 'is_valid' | 'days_left'>): number {
  const days = status.days_left ?? 0;
  return status.is_valid ? days : Math.min(days, 0);
}

/**
 * Records a sealer run: the windows it sealed (0 too, so the sum has data) and, once a window is
 * sealed, the lag in minutes; or the problems a verification found (0 when all verify).
 */
export function recordAuditSealing(
  metrics: Metrics,
  run: { readonly sealed?: number; readonly lagMinutes?: number; readonly verifyFailures?: number },
): void {
  const record = singleRecord(metrics, 'auditSealing');
  if (run.sealed !== undefined) record.addMetric(MetricName.AuditWindowsSealed, MetricUnit.Count, run.sealed);
  if (run.lagMinutes !== undefined)
    record.addMetric(MetricName.AuditSealLag, MetricUnit.Count, run.lagMinutes);
  if (run.verifyFailures !== undefined) {
    record.addMetric(MetricName.AuditVerifyFailures, MetricUnit.Count, run.verifyFailures);
  }
}

/** Records a failed read of the brakes, by what the instance kept (`last` or `none`). */
export function recordBrakesReadFailure(metrics: Metrics, kept: 'last' | 'none'): void {
  singleRecord(metrics, 'brakes')
    .addDimension(Dimension.Kept, kept)
    .addMetric(MetricName.BrakesReadFailures, MetricUnit.Count, 1);
}

/** Records the age of the oldest brake in force, in whole minutes (0: none), from the schedule. */
export function recordOldestBrakeAge(metrics: Metrics, minutes: number): void {
  singleRecord(metrics, 'brakes').addMetric(MetricName.OldestBrakeAge, MetricUnit.Count, minutes);
}

/** Records the license's days left as its own record (published immediately). */
export function recordLicenseDaysLeft(metrics: Metrics, days: number): void {
  if (!Number.isFinite(days)) return;
  singleRecord(metrics, 'license').addMetric(MetricName.LicenseDaysLeft, MetricUnit.Count, days);
}
