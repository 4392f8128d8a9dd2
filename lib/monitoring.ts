/**
 * @module monitoring
 * Alarms and the CloudWatch dashboard. Service metrics come from the functions' EMF records
 * (Powertools Metrics, namespace `ErpProxy`, default dimension `service`); gateway and Lambda
 * metrics from their AWS namespaces.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { BrakesReadFailure } from '../lambdas/platform/brakes/brakes-source.ts';
import { PROXY_ERRORS, serverErrorCodes } from '../lambdas/platform/error-table.ts';
import type { TargetLimits } from '../lambdas/platform/limits.ts';
import { Dimension, LICENSE_CODE, MetricName } from '../lambdas/platform/metrics/catalogue.ts';
import {
  API_NAMES,
  type ApiName,
  type FunctionName,
  METRICS_NAMESPACE,
  SERVICE_NAME,
} from '../lambdas/platform/names.ts';
import {
  AUDIT_VERIFY_HOURS,
  BRAKES_AGE_INTERVAL_MINUTES,
  LICENSE_CHECK_INTERVAL_HOURS,
} from '../lambdas/platform/scheduled-jobs.ts';
import { STORE_OPERATIONS } from '../lambdas/platform/state/state-store.ts';
import type { AlarmSettings, ReservedConcurrency } from './stack-config.ts';

/** APIs that call an ERP, so may time out upstream (and that a bad license refuses). */
const UPSTREAM_APIS: readonly ApiName[] = API_NAMES.filter((api) => api !== 'aux');

/** `-32003`, as the alarms and graphs name it. */
const TIMEOUT_CODE = PROXY_ERRORS.upstreamTimeout.code;

const FIVE_MINUTES = Duration.minutes(5);

/** `-32012`, an operator's brake: HTTP 503, which API Gateway's 5xx metric counts as a failure. */
const BRAKED_CODE = PROXY_ERRORS.braked.code;

/** What an instance keeps when it cannot read the brakes: the `kept` dimension of `BrakesReadFailures`. */
export const BRAKES_KEPT: readonly BrakesReadFailure['kept'][] = Object.freeze(['last', 'none']);

/** The operators' runbook: what to do when a brake alarm fires. */
export const BRAKES_RUNBOOK = 'docs/operators.md#stop-an-agent-now';

/**
 * How many windows the audit's sealing may fall behind, beyond its normal lag, before the
 * `AuditSealLagging` alarm (and how many windows in a row it must be so, or silent).
 */
export const AUDIT_SEAL_LAG_WINDOWS = 3;

/** The audit's sealing, watched (docs/guide/audit.md, "Sealed"). */
export interface AuditSealingWatch {
  /** The scheduled sealer: its errors are alarmed like the other functions'. */
  readonly sealer: IFunction;
  /** `auditSealMinutes`: the windows' length and the seal schedule's period. */
  readonly sealMinutes: number;
  /** Seconds after a window's end before the sealer seals it (records still pending until then). */
  readonly pendingAfterSeconds: number;
}

/**
 * The `AuditSealLagging` alarm's threshold, minutes: a window is sealed once the writers' pending
 * delay has passed after its end, by a run every `sealMinutes`, so the lag the sealer records (from
 * the end of the last sealed window to its run) stays under one window plus that delay;
 * {@link AUDIT_SEAL_LAG_WINDOWS} windows plus the delay is sealing that has fallen behind.
 */
export function auditSealLagThresholdMinutes(watch: Omit<AuditSealingWatch, 'sealer'>): number {
  return AUDIT_SEAL_LAG_WINDOWS * watch.sealMinutes + Math.ceil(watch.pendingAfterSeconds / 60);
}

export interface MonitoringProps {
  readonly api: HttpApi;
  readonly functions: Readonly<Record<FunctionName, IFunction>>;
  /**
   * Each function's reserved concurrency, the only limit it is throttled at (named by its alarm);
   * undefined when deployed without reservations (the account's unreserved pool is the limit).
   */
  readonly reservedConcurrency: ReservedConcurrency | undefined;
  readonly alarms: AlarmSettings;
  /** Every alarm notifies this topic, on ALARM and on OK. */
  readonly topic: ITopic;
  /** `ERP_TARGET_LIMITS` as deployed: each host with an in-flight cap gets its alarm. */
  readonly targetLimits: TargetLimits;
  /** The state table (idempotency records, limits): its errors and throttles have an alarm. */
  readonly stateTable: ITable;
  /** The audit's sealing; undefined with `auditSealing=off` (no sealer, no alarms on it). */
  readonly auditSealing?: AuditSealingWatch | undefined;
  readonly dashboardName: string;
}

function serviceMetric(
  metricName: string,
  statistic: string,
  dimensions: Record<string, string> = {},
  label?: string,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    statistic,
    period: FIVE_MINUTES,
    dimensionsMap: { [Dimension.Service]: SERVICE_NAME, ...dimensions },
    ...(label ? { label } : {}),
  });
}

/**
 * Every series of a service metric over a dimension set (dashboards only: alarms cannot use
 * SEARCH). `Requests` carries `{api, outcome}`, `Errors` `{api, code}`, `McpToolCalls`
 * `{tool, outcome}`, beside `service`.
 */
function searchExpression(metricName: string, dimensions: readonly string[]): MathExpression {
  const schema = [METRICS_NAMESPACE, ...dimensions, Dimension.Service].join(',');
  return new MathExpression({
    expression: `SEARCH('{${schema}} MetricName="${metricName}" ${Dimension.Service}="${SERVICE_NAME}"', 'Sum', 300)`,
    usingMetrics: {},
    period: FIVE_MINUTES,
    label: '',
  });
}

/** The API Gateway metrics the alarms and the dashboard share. */
interface GatewayMetrics {
  readonly gateway: (metricName: string, statistic: string, label: string) => Metric;
  readonly requests: Metric;
  readonly serverErrors: Metric;
  readonly clientErrors: Metric;
  readonly serverErrorRate: MathExpression;
  readonly latencyP99: Metric;
}

/** What the alarms measure that the dashboard shows too. */
interface AlarmedMetrics extends GatewayMetrics {
  readonly upstreamTimeoutsByApi: Record<string, Metric>;
  readonly licenseDaysLeft: Metric;
  readonly auditWriteFailures: Metric;
  readonly auditSealing: AuditSealingMetrics | undefined;
  readonly brakes: BrakesMetrics;
}

/** What the brakes' alarms measure, for the dashboard. */
interface BrakesMetrics {
  readonly oldestBrakeAge: Metric;
  readonly readFailuresByKept: Record<string, Metric>;
}

/** What the audit sealing's alarms measure, for the dashboard. */
interface AuditSealingMetrics {
  readonly sealer: IFunction;
  readonly windowsSealed: Metric;
  readonly sealLag: Metric;
  readonly lagThreshold: number;
  readonly verifyFailures: Metric;
}

export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    // The alarms in the order they are listed (the dashboard's alarm widget keeps it), then the
    // dashboard, then every alarm's action.
    const gateway = this.gatewayAlarm(props.api.apiId, props.alarms);
    const upstreamTimeoutsByApi = this.upstreamTimeoutAlarm(props.alarms);
    this.functionAlarms(props.functions, props.reservedConcurrency);
    const latencyP99 = this.latencyAlarm(gateway.gateway, props.alarms);
    const licenseDaysLeft = this.licenseAlarms(props.alarms);
    this.limitsAlarms(props.targetLimits);
    this.stateTableAlarm(props.stateTable);
    const auditWriteFailures = this.auditAlarm();
    const auditSealing = props.auditSealing && this.auditSealingAlarms(props.auditSealing);
    const brakes = this.brakesAlarms(props.alarms);
    this.dashboard = this.buildDashboard(props, {
      ...gateway,
      latencyP99,
      upstreamTimeoutsByApi,
      licenseDaysLeft,
      auditWriteFailures,
      auditSealing,
      brakes,
    });
    this.notify(props.topic);
  }

  /** The gateway's metrics, and the 5xx rate alarm. */
  private gatewayAlarm(apiId: string, settings: AlarmSettings): Omit<GatewayMetrics, 'latencyP99'> {
    const gateway = (metricName: string, statistic: string, label: string): Metric =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        statistic,
        period: FIVE_MINUTES,
        dimensionsMap: { ApiId: apiId },
        label,
      });
    const requests = gateway('Count', 'Sum', 'Requests');
    const serverErrors = gateway('5xx', 'Sum', '5xx');
    const clientErrors = gateway('4xx', 'Sum', '4xx');

    // 5xx share of requests; quiet periods (under 10 requests) do not alarm on one failure.
    const serverErrorRate = new MathExpression({
      expression: 'IF(requests >= 10, 100 * errors / requests, 0)',
      usingMetrics: { requests, errors: serverErrors },
      period: FIVE_MINUTES,
      label: '5xx rate (%)',
    });
    // API Gateway's 5xx cannot tell a brake's refusal (-32012, HTTP 503, no failure) from the others:
    // the description says so, and the Braked metric tells them apart (docs/deployment.md, "5xx under a brake").
    this.addAlarm('Api5xxRate', {
      description:
        `More than ${settings.serverErrorRatePercent}% of requests answered 5xx (proxy errors ${serverErrorCodes().join('/')}, or gateway errors) in 2 of the last 3 periods of 5 minutes. ` +
        `Under an operator's brake (mode writes or all) its refusals, ${BRAKED_CODE} (HTTP 503), count here too: the Braked metric (dashboard) tells them apart.`,
      metric: serverErrorRate,
      threshold: settings.serverErrorRatePercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    return { gateway, requests, serverErrors, clientErrors, serverErrorRate };
  }

  /** Upstream timeouts (-32003) of every API that calls an ERP, and their alarm. */
  private upstreamTimeoutAlarm(settings: AlarmSettings): Record<string, Metric> {
    const upstreamTimeoutsByApi = Object.fromEntries(
      UPSTREAM_APIS.map((api) => [
        api,
        serviceMetric(MetricName.UpstreamTimeouts, 'Sum', { [Dimension.Api]: api }, api),
      ]),
    );
    const upstreamTimeouts = new MathExpression({
      expression: UPSTREAM_APIS.map((api) => `FILL(${api}, 0)`).join(' + '),
      usingMetrics: upstreamTimeoutsByApi,
      period: FIVE_MINUTES,
      label: `Upstream timeouts (${TIMEOUT_CODE})`,
    });
    this.addAlarm('UpstreamTimeouts', {
      description: `At least ${settings.upstreamTimeouts} upstream timeouts (${TIMEOUT_CODE}) in 5 minutes: an ERP is slow or unreachable after connect.`,
      metric: upstreamTimeouts,
      threshold: settings.upstreamTimeouts,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    return upstreamTimeoutsByApi;
  }

  /**
   * The state table failing: DynamoDB's own errors or throttles on the store's operations. Each is a
   * write with an Idempotency-Key refused -32004 (it never runs without its record).
   */
  private stateTableAlarm(table: ITable): void {
    // One metric per operation and kind (DynamoDB reports both by operation).
    const usingMetrics: Record<string, Metric> = {};
    for (const [i, operation] of STORE_OPERATIONS.entries()) {
      for (const [kind, name] of [
        ['e', 'SystemErrors'],
        ['t', 'ThrottledRequests'],
      ] as const) {
        usingMetrics[`${kind}${i}`] = table.metric(name, {
          dimensionsMap: { TableName: table.tableName, Operation: operation },
          statistic: 'Sum',
          period: FIVE_MINUTES,
        });
      }
    }
    this.addAlarm('StateTableErrors', {
      description:
        'At least one DynamoDB system error or throttled request on the state table in 5 minutes: writes with an Idempotency-Key are refused -32004 (they never run without their record).',
      metric: new MathExpression({
        expression: Object.keys(usingMetrics)
          .map((id) => `FILL(${id}, 0)`)
          .join(' + '),
        usingMetrics,
        period: FIVE_MINUTES,
        label: 'State table errors and throttles',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
  }

  /**
   * Audit records that could not be written (docs/guide/audit.md): with `AUDIT=on` a call whose
   * pending record failed was refused before the ERP (503 -32004), with `best-effort` it ran
   * without its record; a record whose end failed stays pending (it reads `unknown`), and a
   * refusal's record was lost.
   */
  private auditAlarm(): Metric {
    const failures = serviceMetric(MetricName.AuditWriteFailures, 'Sum');
    this.addAlarm('AuditWriteFailures', {
      description:
        'At least one audit record could not be written in 5 minutes. With AUDIT=on, writes were refused 503 -32004 before ' +
        'reaching the ERP; with best-effort they ran without their record; a record whose end was lost reads unknown. ' +
        'The function logs say why; check the audit table, its grants, the audit digest secret and DynamoDB throttling.',
      metric: failures,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    return failures;
  }

  /**
   * The audit's sealing (docs/guide/audit.md, "Sealed"): the sealer's errors (as every function's),
   * sealing fallen behind or stopped (`AuditSealLagging`: missing data breaches, since a sealer that
   * does not run records nothing), and the daily verification's failures (`AuditVerifyFailures`).
   */
  private auditSealingAlarms(watch: AuditSealingWatch): AuditSealingMetrics {
    const { sealer, sealMinutes, pendingAfterSeconds } = watch;
    this.addAlarm('AuditSealerErrors', {
      description:
        'The audit-sealer function failed (crash or Lambda timeout) at least once in 5 minutes: windows stay unsealed until ' +
        'a run succeeds (the next run seals every closed window in order). Its logs say why; check its grants on the audit ' +
        'table, the bucket and the seal key.',
      metric: sealer.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    const period = Duration.minutes(sealMinutes);
    const sealLag = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: MetricName.AuditSealLag,
      statistic: 'Maximum',
      period,
      dimensionsMap: { [Dimension.Service]: SERVICE_NAME },
    });
    const lagThreshold = auditSealLagThresholdMinutes(watch);
    this.addAlarm('AuditSealLagging', {
      description:
        `Audit sealing has fallen behind or stopped: in each of the last ${AUDIT_SEAL_LAG_WINDOWS} windows of ${sealMinutes} minutes, ` +
        `the last sealed window ended more than ${lagThreshold} minutes before the sealer ran (${AUDIT_SEAL_LAG_WINDOWS} windows, ` +
        `plus the ${pendingAfterSeconds} s a record may stay pending), or the sealer recorded nothing (missing data counts: a ` +
        'sealer that does not run records no lag). Records stay editable until sealed; see the AuditSealerErrors alarm and ' +
        "the sealer's logs, and its schedule.",
      metric: sealLag,
      threshold: lagThreshold,
      evaluationPeriods: AUDIT_SEAL_LAG_WINDOWS,
      datapointsToAlarm: AUDIT_SEAL_LAG_WINDOWS,
      treatMissingData: TreatMissingData.BREACHING,
    });
    // An hour at a time, so the alarm fires within the hour of a failed verification and holds
    // for the day the verification covers.
    const verifyFailures = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: MetricName.AuditVerifyFailures,
      statistic: 'Sum',
      period: Duration.hours(1),
      dimensionsMap: { [Dimension.Service]: SERVICE_NAME },
    });
    this.addAlarm('AuditVerifyFailures', {
      description:
        `The daily verification of the last ${AUDIT_VERIFY_HOURS} hours of sealed audit windows found at least one problem ` +
        '(a record or seal changed, removed or inserted, a broken chain, a missing window, a bad signature, a second object ' +
        "version, delete marker or lock, a record of the table edited after sealing). The sealer's logs name each; run npm run audit-log -- verify " +
        '(docs/guide/audit.md, "How an auditor checks it").',
      metric: verifyFailures,
      threshold: 1,
      evaluationPeriods: AUDIT_VERIFY_HOURS,
      datapointsToAlarm: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    const windowsSealed = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: MetricName.AuditWindowsSealed,
      statistic: 'Sum',
      period,
      dimensionsMap: { [Dimension.Service]: SERVICE_NAME },
    });
    return { sealer, windowsSealed, sealLag, lagThreshold, verifyFailures };
  }

  /**
   * The operators' brakes (docs/operators.md, "Stop an agent now"): a brake left in force after the
   * incident (`BrakeForgotten`, from the aux function's report every
   * {@link BRAKES_AGE_INTERVAL_MINUTES} minutes, with or without calls; a report that fails counts
   * AuxErrors and records nothing, so missing data is not breaching), and instances that could not
   * read the brakes (`BrakesUnread`): each keeps the brakes it last read, or serves without any if
   * it never read them (fail open).
   */
  private brakesAlarms(settings: AlarmSettings): BrakesMetrics {
    const oldestBrakeAge = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: MetricName.OldestBrakeAge,
      statistic: 'Maximum',
      period: Duration.minutes(BRAKES_AGE_INTERVAL_MINUTES),
      dimensionsMap: { [Dimension.Service]: SERVICE_NAME },
    });
    this.addAlarm('BrakeForgotten', {
      description:
        `An operator's brake has been in force for ${settings.brakeAgeMinutes} minutes or more (the aux function reports the oldest every ${BRAKES_AGE_INTERVAL_MINUTES} minutes): ` +
        `the calls it covers are still refused ${BRAKED_CODE}. If the incident is over, release it (npm run brakes -- list, then npm run brakes -- release <id>); ` +
        `if it must stay, set it again with an expiry and release the old one. Runbook: ${BRAKES_RUNBOOK}.`,
      metric: oldestBrakeAge,
      threshold: settings.brakeAgeMinutes,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    const readFailuresByKept = Object.fromEntries(
      BRAKES_KEPT.map((kept) => [
        kept,
        serviceMetric(MetricName.BrakesReadFailures, 'Sum', { [Dimension.Kept]: kept }, `kept ${kept}`),
      ]),
    );
    this.addAlarm('BrakesUnread', {
      description:
        "At least one function instance could not read the operators' brakes from the state table in 5 minutes (BrakesReadFailures). " +
        'kept=last: it applies the brakes it last read, so a brake set or released since is not applied by it; kept=none: it never read ' +
        'any and serves without brakes (fail open). The function logs say why ("brakes: the store could not be read"); check the state ' +
        `table, the functions' ReadBrakes grant and DynamoDB throttling. Runbook: ${BRAKES_RUNBOOK}.`,
      metric: new MathExpression({
        expression: BRAKES_KEPT.map((kept) => `FILL(${kept}, 0)`).join(' + '),
        usingMetrics: readFailuresByKept,
        period: FIVE_MINUTES,
        label: 'Brakes read failures',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    return { oldestBrakeAge, readFailuresByKept };
  }

  /** Each function's errors and throttles. */
  private functionAlarms(
    functions: MonitoringProps['functions'],
    reservedConcurrency: ReservedConcurrency | undefined,
  ): void {
    for (const [name, fn] of Object.entries(functions) as [FunctionName, IFunction][]) {
      const key = name.replace(/(^|-)(\w)/g, (_m, _dash: string, c: string) => c.toUpperCase());
      this.addAlarm(`${key}Errors`, {
        description: `The ${name} function failed (crash or Lambda timeout) at least once in 5 minutes. Handled proxy errors do not count here.`,
        metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      this.addAlarm(`${key}Throttles`, {
        // A function with reserved concurrency is throttled at its own reservation only, never for
        // the account's unreserved pool.
        description:
          reservedConcurrency === undefined
            ? `The ${name} function was throttled at least once in 5 minutes: the account's unreserved concurrency ` +
              'was used up (this function, or any other of the account: deployed without reservations).'
            : `The ${name} function was throttled at least once in 5 minutes: all ${reservedConcurrency[name]} ` +
              'executions of its reserved concurrency were busy (slow calls hold them, or traffic grew).',
        metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
  }

  /** The gateway's p99 latency alarm. */
  private latencyAlarm(gateway: GatewayMetrics['gateway'], settings: AlarmSettings): Metric {
    const latencyP99 = gateway('Latency', 'p99', 'Latency p99');
    this.addAlarm('ApiLatencyP99', {
      description: `API Gateway p99 latency above ${settings.p99LatencyMs} ms for 15 minutes.`,
      metric: latencyP99,
      threshold: settings.p99LatencyMs,
      evaluationPeriods: 3,
    });

    return latencyP99;
  }

  /** The license's days left (hourly) and the refused calls. */
  private licenseAlarms(settings: AlarmSettings): Metric {
    // Recorded by the aux function's hourly license check (with or without calls) and, during
    // calls, once a minute per execution environment; 0 for a license that serves no call.
    const licenseDaysLeft = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: MetricName.LicenseDaysLeft,
      statistic: 'Minimum',
      period: Duration.hours(LICENSE_CHECK_INTERVAL_HOURS),
      dimensionsMap: { [Dimension.Service]: SERVICE_NAME },
      label: 'License days left',
    });
    this.addAlarm('LicenseExpiring', {
      description:
        `The license expires within ${settings.licenseWarningDays} days, has expired, or serves no call (placeholder, malformed, bad signature: GET /_/license says which). ` +
        'Put a valid license into the license secret (docs/deployment.md). Checked every hour, with or without traffic.',
      metric: licenseDaysLeft,
      threshold: settings.licenseWarningDays,
      // 1 of the last 2 hours: an hour the schedule's timing leaves without a record does not
      // turn the alarm OK in between (missing data counts as OK).
      evaluationPeriods: 2,
      datapointsToAlarm: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    });

    // Refused calls, within 5 minutes of the first (the license check above runs hourly).
    const licenseRefusalsByApi = Object.fromEntries(
      UPSTREAM_APIS.map((api) => [
        api,
        serviceMetric(
          MetricName.Errors,
          'Sum',
          { [Dimension.Api]: api, [Dimension.Code]: LICENSE_CODE },
          api,
        ),
      ]),
    );
    this.addAlarm('LicenseRefusals', {
      description:
        'Calls were refused because the license is missing, invalid or expired (HTTP 403, code 0) in the last 5 minutes. ' +
        'GET /_/license says why; put a valid license into the license secret (docs/deployment.md).',
      metric: new MathExpression({
        expression: UPSTREAM_APIS.map((api) => `FILL(${api}, 0)`).join(' + '),
        usingMetrics: licenseRefusalsByApi,
        period: FIVE_MINUTES,
        label: 'License refusals',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    return licenseDaysLeft;
  }

  /**
   * The limits (README, "Limits"): calls served without their limits because the store could not be
   * asked (fail open), and, for each ERP with an in-flight cap, a cap that refused calls in each of
   * the last 5 minutes (the ERP is saturated, or the cap is too low).
   */
  private limitsAlarms(targetLimits: TargetLimits): void {
    const statefulApis = ['v1', 'v2', 'mcp'] as const;
    const failedOpenByApi = Object.fromEntries(
      statefulApis.map((api) => [
        api,
        serviceMetric(MetricName.LimitsFailedOpen, 'Sum', { [Dimension.Api]: api }, api),
      ]),
    );
    this.addAlarm('LimitsFailedOpen', {
      description:
        'Calls were served without their rate limits and in-flight caps in the last 5 minutes: the state table could not be reached (fail open). ' +
        'The function logs say why (limits_failed_open); check the table, its grants and DynamoDB throttling (docs/deployment.md, "Limits").',
      metric: new MathExpression({
        expression: statefulApis.map((api) => `FILL(${api}, 0)`).join(' + '),
        usingMetrics: failedOpenByApi,
        period: FIVE_MINUTES,
        label: 'Calls served without limits',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    for (const limit of targetLimits.values()) {
      if (limit.inFlight === undefined) continue;
      this.addAlarm(`InFlightCap-${limit.host.replace(/[^A-Za-z0-9.-]/g, '-')}`, {
        description:
          `The in-flight cap of ${limit.host} (${limit.inFlight}) refused calls in each of the last 5 minutes: the ERP is saturated or the cap is too low. ` +
          'Check the ERP (workers, slow calls); raise in_flight only below its workers (docs/deployment.md, "Limits").',
        metric: new Metric({
          namespace: METRICS_NAMESPACE,
          metricName: MetricName.InFlightRefusals,
          statistic: 'Sum',
          period: Duration.minutes(1),
          dimensionsMap: { [Dimension.Service]: SERVICE_NAME, [Dimension.Host]: limit.host },
        }),
        threshold: 1,
        evaluationPeriods: 5,
        datapointsToAlarm: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
  }

  /** The dashboard: gateway, service, Lambda and license widgets, and the alarms' status. */
  private buildDashboard(props: MonitoringProps, metrics: AlarmedMetrics): Dashboard {
    const { functions, alarms: settings } = props;
    const stackName = Stack.of(this).stackName;
    const { gateway, requests, clientErrors, serverErrors, serverErrorRate, latencyP99 } = metrics;
    const { upstreamTimeoutsByApi, licenseDaysLeft } = metrics;
    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName });

    dashboard.addWidgets(
      new TextWidget({
        markdown: [
          `# ${SERVICE_NAME} (${stackName})`,
          `Gateway metrics: AWS/ApiGateway. Service metrics: \`${METRICS_NAMESPACE}\`, dimension \`${Dimension.Api}\` = ${API_NAMES.join(', ')}.`,
          'Logs: one log group per function (JSON lines, one per request) and the API access log group.',
        ].join('\n\n'),
        width: 24,
        height: 3,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests and errors (gateway)',
        left: [requests, clientErrors, serverErrors],
        width: 8,
      }),
      new GraphWidget({
        title: '5xx rate (%)',
        left: [serverErrorRate],
        leftAnnotations: [{ value: settings.serverErrorRatePercent, label: 'alarm' }],
        width: 8,
      }),
      new GraphWidget({
        title: 'Gateway latency (ms)',
        left: [
          gateway('Latency', 'p50', 'Latency p50'),
          latencyP99,
          gateway('IntegrationLatency', 'p99', 'Integration p99'),
        ],
        leftAnnotations: [{ value: settings.p99LatencyMs, label: 'alarm' }],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests by API and outcome',
        left: [searchExpression(MetricName.Requests, [Dimension.Api, Dimension.Outcome])],
        width: 8,
      }),
      new GraphWidget({
        title: 'Errors by API and code',
        left: [searchExpression(MetricName.Errors, [Dimension.Api, Dimension.Code])],
        width: 8,
      }),
      new GraphWidget({
        title: `Upstream timeouts (${TIMEOUT_CODE})`,
        left: Object.values(upstreamTimeoutsByApi),
        leftAnnotations: [{ value: settings.upstreamTimeouts, label: 'alarm (sum)' }],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Upstream latency (ms)',
        left: UPSTREAM_APIS.flatMap((api) => [
          serviceMetric(MetricName.UpstreamLatency, 'p50', { [Dimension.Api]: api }, `${api} p50`),
          serviceMetric(MetricName.UpstreamLatency, 'p99', { [Dimension.Api]: api }, `${api} p99`),
        ]),
        width: 8,
      }),
      new GraphWidget({
        title: 'Proxy overhead p99 (ms)',
        left: API_NAMES.map((api) =>
          serviceMetric(MetricName.ProxyOverhead, 'p99', { [Dimension.Api]: api }, api),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Response bytes (max)',
        left: API_NAMES.map((api) =>
          serviceMetric(MetricName.ResponseBytes, 'Maximum', { [Dimension.Api]: api }, api),
        ),
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Audit records by outcome',
        left: [searchExpression(MetricName.AuditRecords, [Dimension.Outcome])],
        width: 12,
      }),
      new GraphWidget({
        title: 'Audit write failures',
        left: [metrics.auditWriteFailures.with({ label: 'Audit write failures' })],
        leftAnnotations: [{ value: 1, label: 'alarm' }],
        width: 12,
      }),
    );
    this.addBrakesWidgets(dashboard, metrics.brakes, settings);
    if (metrics.auditSealing) this.addAuditSealingWidgets(dashboard, metrics.auditSealing);
    this.addLambdaAndLicenseWidgets(dashboard, functions, licenseDaysLeft);
    return dashboard;
  }

  /**
   * The brakes' row: the calls they stopped by scope kind and mode (what tells a brake's 503s apart
   * from failures in the 5xx graphs), the oldest brake's age, and the failed reads.
   */
  private addBrakesWidgets(dashboard: Dashboard, brakes: BrakesMetrics, settings: AlarmSettings): void {
    dashboard.addWidgets(
      new GraphWidget({
        title: `Braked calls (${BRAKED_CODE}) by scope and mode`,
        left: [searchExpression(MetricName.Braked, [Dimension.Scope, Dimension.Mode])],
        width: 8,
      }),
      new GraphWidget({
        title: 'Oldest brake in force (minutes)',
        left: [brakes.oldestBrakeAge.with({ label: 'Oldest brake (minutes)' })],
        leftAnnotations: [{ value: settings.brakeAgeMinutes, label: 'alarm' }],
        width: 8,
      }),
      new GraphWidget({
        title: 'Brakes read failures',
        left: Object.values(brakes.readFailuresByKept),
        leftAnnotations: [{ value: 1, label: 'alarm (sum)' }],
        width: 8,
      }),
    );
  }

  /** The audit sealing's row: windows sealed, the seal lag, verification failures, the sealer's errors. */
  private addAuditSealingWidgets(dashboard: Dashboard, sealing: AuditSealingMetrics): void {
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Audit windows sealed',
        left: [sealing.windowsSealed.with({ label: 'Windows sealed' })],
        width: 6,
      }),
      new GraphWidget({
        title: 'Audit seal lag (minutes)',
        left: [sealing.sealLag.with({ label: 'Seal lag (minutes)' })],
        leftAnnotations: [{ value: sealing.lagThreshold, label: 'alarm' }],
        width: 6,
      }),
      new GraphWidget({
        title: 'Audit verify failures',
        left: [sealing.verifyFailures.with({ label: 'Verify failures' })],
        leftAnnotations: [{ value: 1, label: 'alarm' }],
        width: 6,
      }),
      new GraphWidget({
        title: 'Audit sealer errors and throttles',
        left: [
          sealing.sealer.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: 'errors' }),
          sealing.sealer.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: 'throttles' }),
        ],
        width: 6,
      }),
    );
  }

  /** The dashboard's last two rows: each function's Lambda metrics, the license, the MCP tools and the alarms. */
  private addLambdaAndLicenseWidgets(
    dashboard: Dashboard,
    functions: MonitoringProps['functions'],
    licenseDaysLeft: Metric,
  ): void {
    const fnEntries = Object.entries(functions) as [FunctionName, IFunction][];
    const perFunction = (make: (fn: IFunction) => IMetric, label: string): IMetric[] =>
      fnEntries.map(([name, fn]) => {
        const metric = make(fn);
        return metric instanceof Metric ? metric.with({ label: `${name} ${label}` }) : metric;
      });
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda errors and throttles',
        left: [
          ...perFunction((fn) => fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), 'errors'),
          ...perFunction((fn) => fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), 'throttles'),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda duration p99 (ms)',
        left: perFunction((fn) => fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' }), 'p99'),
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda concurrent executions (max)',
        left: perFunction(
          (fn) => fn.metric('ConcurrentExecutions', { period: FIVE_MINUTES, statistic: 'Maximum' }),
          'concurrency',
        ),
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new SingleValueWidget({ title: 'License days left', metrics: [licenseDaysLeft], width: 6, height: 6 }),
      new GraphWidget({
        title: 'MCP tool calls by tool and outcome',
        left: [searchExpression(MetricName.McpToolCalls, [Dimension.Tool, Dimension.Outcome])],
        width: 6,
        height: 6,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 12, height: 6 }),
    );
  }

  /** Every alarm notifies the topic, on ALARM and on OK. */
  private notify(topic: ITopic): void {
    const action = new SnsAction(topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }

  private addAlarm(
    id: string,
    options: {
      description: string;
      metric: IMetric;
      threshold: number;
      evaluationPeriods: number;
      datapointsToAlarm?: number;
      comparisonOperator?: ComparisonOperator;
      treatMissingData?: TreatMissingData;
    },
  ): void {
    this.alarms.push(
      new Alarm(this, id, {
        alarmName: `${Stack.of(this).stackName}-${id}`,
        alarmDescription: options.description,
        metric: options.metric,
        threshold: options.threshold,
        evaluationPeriods: options.evaluationPeriods,
        ...(options.datapointsToAlarm ? { datapointsToAlarm: options.datapointsToAlarm } : {}),
        comparisonOperator: options.comparisonOperator ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
        // No traffic is not a failure; an idle proxy stays OK (the seal lag's alarm says otherwise).
        treatMissingData: options.treatMissingData ?? TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
