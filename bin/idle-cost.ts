/**
 * @module idle-cost
 * `npm run docs:cost`: the idle monthly cost of the trial stack (environments/trial.json), by
 * component, counted from the synthesized template (never by hand) and priced with the list prices
 * below, written into docs/deploy-trial.md between `<!-- idle-cost -->` markers (`-- --check`
 * only compares). "Idle": deployed, no calls; only the schedules run: the hourly license check,
 * the brakes report (every few minutes: one read of the brakes item, `OldestBrakeAge`), and, with the audit sealed (`auditSealing` not `off`), the audit sealer, which seals an empty
 * window every `auditSealMinutes` (one signature, one object) and verifies the last day's daily.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MetricName } from '../lambdas/platform/metrics/catalogue.ts';
import {
  AUDIT_SEAL_EVENT,
  AUDIT_VERIFY_EVENT,
  BRAKES_AGE_EVENT,
  LICENSE_CHECK_EVENT,
} from '../lambdas/platform/scheduled-jobs.ts';

/** The day the prices below were last checked against AWS's pricing pages. */
export const PRICES_AS_OF = '2026-11-29';

/** List prices in USD, us-east-1, without the free tier. */
export const PRICES = Object.freeze({
  secretMonth: 0.4,
  alarmMetricMonth: 0.1,
  dashboardMonth: 3,
  customMetricMonth: 0.3,
  logsIngestedGb: 0.5,
  logsStoredGbMonth: 0.03,
  dynamoWriteMillion: 0.625,
  dynamoReadMillion: 0.125,
  dynamoStoredGbMonth: 0.25,
  httpApiMillion: 1,
  lambdaRequestMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334,
  kmsKeyMonth: 1,
  /** KMS requests on asymmetric keys other than RSA 2048 (`Sign` with ECC_NIST_P256); no free tier. */
  kmsAsymmetricTenThousand: 0.15,
  s3PutThousand: 0.005,
  s3StoredGbMonth: 0.023,
});

/**
 * The custom metrics the audit sealer records while idle (lambdas/platform/metrics/catalogue.ts):
 * an empty window sealed, the lag, the daily verification's failures (0).
 */
export const AUDIT_SEALER_METRICS = Object.freeze([
  MetricName.AuditWindowsSealed,
  MetricName.AuditSealLag,
  MetricName.AuditVerifyFailures,
]);

/**
 * What an idle seal run takes, assumed (not in the template): about a second (a Query of the
 * window, the seal head's read and update, one signature, one object written).
 */
export const ASSUMED_SEAL_RUN_SECONDS = 1;

/** How long a brakes report runs (one read of one item), and the aux function's memory it is counted at. */
export const ASSUMED_BRAKES_RUN_SECONDS = 0.1;
const ASSUMED_BRAKES_MEMORY_MB = 256;

/** Hours in the month the idle cost counts (30 days). */
const HOURS_A_MONTH = 720;
const MINUTES_A_MONTH = HOURS_A_MONTH * 60;

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
export interface Template {
  readonly Resources: Record<string, Resource>;
}

export interface CostRow {
  readonly component: string;
  readonly count: string;
  readonly price: string;
  readonly monthly: number;
}

const usd = (value: number): string => `$${value.toFixed(2)}`;
/** A unit price as listed: cents, or the listed fraction of a cent ($0.625). */
const price = (value: number): string => (Number(value.toFixed(2)) === value ? usd(value) : `$${value}`);

function ofType(template: Template, type: string): Resource[] {
  return Object.values(template.Resources).filter((resource) => resource.Type === type);
}

/** An alarm's billed metrics: one for a plain alarm, one per metric (not expression) of a math alarm. */
function alarmMetrics(alarm: Resource): number {
  const metrics = alarm.Properties?.Metrics;
  if (!Array.isArray(metrics)) return 1;
  return metrics.filter((metric: { MetricStat?: unknown }) => metric.MetricStat !== undefined).length;
}

/** The schedules whose (single) target gets exactly `event`. */
function schedulesSending(template: Template, event: unknown): Resource[] {
  return ofType(template, 'AWS::Events::Rule').filter((rule) => {
    const targets = rule.Properties?.Targets as { Input?: string }[] | undefined;
    return targets?.some((target) => target.Input === JSON.stringify(event)) ?? false;
  });
}

/** Minutes between two runs of a `rate(...)` schedule. */
function rateMinutes(rule: Resource): number {
  const expression = String(rule.Properties?.ScheduleExpression);
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!match) throw new Error(`not a rate schedule: ${expression}`);
  return Number(match[1]) * { minute: 1, hour: 60, day: 1440 }[match[2] as 'minute' | 'hour' | 'day'];
}

/** The audit sealer's idle month, when the template seals the audit: its runs, its memory. */
interface Sealing {
  /** Windows sealed a month (each its own run, signature and object). */
  readonly windows: number;
  readonly windowMinutes: number;
  /** Invocations a month: every seal, and the daily verification. */
  readonly invocations: number;
  readonly memoryMb: number;
  readonly keys: number;
  readonly buckets: number;
}

function sealingOf(template: Template): Sealing | undefined {
  const [seal, more] = schedulesSending(template, AUDIT_SEAL_EVENT);
  if (!seal) return undefined;
  if (more) throw new Error('more than one audit seal schedule');
  const windowMinutes = rateMinutes(seal);
  const windows = MINUTES_A_MONTH / windowMinutes;
  // The sealer: the function the seal schedule targets (the verification schedule's too).
  const target = JSON.stringify((seal.Properties?.Targets as { Arn: unknown }[] | undefined)?.[0]?.Arn);
  const sealer = Object.entries(template.Resources).find(
    ([id, resource]) =>
      resource.Type === 'AWS::Lambda::Function' && target === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }),
  )?.[1];
  if (!sealer) throw new Error('the audit seal schedule targets no function of the template');
  const verifications = schedulesSending(template, AUDIT_VERIFY_EVENT)
    .map((rule) => MINUTES_A_MONTH / rateMinutes(rule))
    .reduce((sum, n) => sum + n, 0);
  return {
    windows,
    windowMinutes,
    invocations: windows + verifications,
    memoryMb: Number(sealer.Properties?.MemorySize),
    keys: ofType(template, 'AWS::KMS::Key').length,
    buckets: ofType(template, 'AWS::S3::Bucket').length,
  };
}

/** The audit sealing's rows (docs/guide/audit.md, "Sealed"): its key, its signatures, its bucket. */
function sealingRows(sealing: Sealing): CostRow[] {
  const { windows, windowMinutes } = sealing;
  const count = (n: number) => n.toLocaleString('en-US');
  return [
    {
      component: 'KMS key (signs the audit seals)',
      count: String(sealing.keys),
      price: `${price(PRICES.kmsKeyMonth)} per key-month`,
      monthly: sealing.keys * PRICES.kmsKeyMonth,
    },
    {
      component: 'KMS signatures (one per sealed window, empty ones too)',
      count: `${count(windows)} (a window every ${windowMinutes} minutes)`,
      price: `${price(PRICES.kmsAsymmetricTenThousand)} per 10,000 asymmetric requests (no free tier)`,
      monthly: (windows / 10_000) * PRICES.kmsAsymmetricTenThousand,
    },
    {
      component: 'S3 bucket of sealed windows (Object Lock)',
      count: `${sealing.buckets} (${count(windows)} PUTs: one per empty window, two per window with records)`,
      price: `${price(PRICES.s3PutThousand)} per 1,000 PUTs, ${price(PRICES.s3StoredGbMonth)} per GB-month (an empty window's seal is under 1 KB)`,
      monthly: (windows / 1000) * PRICES.s3PutThousand,
    },
  ];
}

/** The idle monthly cost of `template`, by component. */
export function idleCost(template: Template): CostRow[] {
  const secrets = ofType(template, 'AWS::SecretsManager::Secret').length;
  const alarms = ofType(template, 'AWS::CloudWatch::Alarm');
  const alarmMetricCount = alarms.reduce((sum, alarm) => sum + alarmMetrics(alarm), 0);
  const dashboards = ofType(template, 'AWS::CloudWatch::Dashboard').length;
  const schedules = ofType(template, 'AWS::Events::Rule').length;
  const licenseChecks = schedulesSending(template, LICENSE_CHECK_EVENT).length;
  // The brakes report: each run one strongly consistent read (one read unit) and `OldestBrakeAge`.
  const brakesRuns = schedulesSending(template, BRAKES_AGE_EVENT).reduce(
    (sum, rule) => sum + MINUTES_A_MONTH / rateMinutes(rule),
    0,
  );
  const brakesMetrics = brakesRuns > 0 ? 1 : 0;
  const brakesLambda =
    (brakesRuns / 1e6) * PRICES.lambdaRequestMillion +
    brakesRuns * ASSUMED_BRAKES_RUN_SECONDS * (ASSUMED_BRAKES_MEMORY_MB / 1024) * PRICES.lambdaArmGbSecond;
  const brakesReads = (brakesRuns / 1e6) * PRICES.dynamoReadMillion;
  const sealing = sealingOf(template);
  const customMetrics = licenseChecks + brakesMetrics + (sealing ? AUDIT_SEALER_METRICS.length : 0);
  const logGroups = ofType(template, 'AWS::Logs::LogGroup').length;
  const tables = ofType(template, 'AWS::DynamoDB::Table').length;
  const apis = ofType(template, 'AWS::ApiGatewayV2::Api').length;
  const functions = ofType(template, 'AWS::Lambda::Function').length;
  const topics = ofType(template, 'AWS::SNS::Topic').length;
  const sealerGbSeconds = sealing
    ? sealing.invocations * ASSUMED_SEAL_RUN_SECONDS * (sealing.memoryMb / 1024)
    : 0;
  const sealerLambda = sealing
    ? (sealing.invocations / 1e6) * PRICES.lambdaRequestMillion + sealerGbSeconds * PRICES.lambdaArmGbSecond
    : 0;
  return [
    {
      component: 'Secrets Manager secrets',
      count: String(secrets),
      price: `${price(PRICES.secretMonth)} per secret-month`,
      monthly: secrets * PRICES.secretMonth,
    },
    {
      component: 'CloudWatch alarms',
      count: `${alarms.length} (${alarmMetricCount} alarm metrics)`,
      price: `${price(PRICES.alarmMetricMonth)} per alarm metric-month (standard resolution)`,
      monthly: alarmMetricCount * PRICES.alarmMetricMonth,
    },
    {
      component: 'CloudWatch dashboards',
      count: String(dashboards),
      price: `${price(PRICES.dashboardMonth)} per dashboard-month`,
      monthly: dashboards * PRICES.dashboardMonth,
    },
    {
      component: sealing
        ? 'custom metrics (the hourly license check records `LicenseDaysLeft`; the brakes report `OldestBrakeAge`; the audit sealer ' +
          AUDIT_SEALER_METRICS.map((name) => `\`${name}\``).join(', ') +
          ')'
        : 'custom metrics (the hourly license check records `LicenseDaysLeft`; the brakes report `OldestBrakeAge`)',
      count: sealing
        ? `${customMetrics} (${licenseChecks} per license check, ${brakesMetrics} of the brakes report, ${AUDIT_SEALER_METRICS.length} of the sealer)`
        : `${customMetrics} (one per scheduled job)`,
      price: `${price(PRICES.customMetricMonth)} per metric-month`,
      monthly: customMetrics * PRICES.customMetricMonth,
    },
    {
      component: 'CloudWatch log groups',
      count: String(logGroups),
      price: `${price(PRICES.logsIngestedGb)} per GB ingested, ${price(PRICES.logsStoredGbMonth)} per GB-month stored; nothing for an empty group`,
      monthly: 0,
    },
    {
      component: 'DynamoDB table, on demand',
      count: String(tables),
      price: sealing
        ? `${price(PRICES.dynamoWriteMillion)} per million write units, ${price(PRICES.dynamoReadMillion)} per million read units, ${price(PRICES.dynamoStoredGbMonth)} per GB-month; idle, only the brakes report's read (${brakesRuns.toLocaleString('en-US')} a month), the sealer's reads and its seal head's update, a few per window`
        : `${price(PRICES.dynamoWriteMillion)} per million write units, ${price(PRICES.dynamoReadMillion)} per million read units, ${price(PRICES.dynamoStoredGbMonth)} per GB-month; idle, only the brakes report's read (${brakesRuns.toLocaleString('en-US')} a month)`,
      monthly: brakesReads,
    },
    {
      component: 'API Gateway HTTP API',
      count: String(apis),
      price: `${price(PRICES.httpApiMillion)} per million requests`,
      monthly: 0,
    },
    {
      component: 'Lambda functions',
      count: sealing
        ? `${functions} (the hourly check: ${licenseChecks * HOURS_A_MONTH} invocations a month; the brakes report: ${brakesRuns.toLocaleString('en-US')}; the audit sealer: ` +
          `${sealing.invocations.toLocaleString('en-US')} of about ${ASSUMED_SEAL_RUN_SECONDS} s at ${sealing.memoryMb} MB)`
        : `${functions} (the hourly check: ${licenseChecks * HOURS_A_MONTH} invocations a month; the brakes report: ${brakesRuns.toLocaleString('en-US')})`,
      price: `${price(PRICES.lambdaRequestMillion)} per million requests, ${price(PRICES.lambdaArmGbSecond)} per GB-second (Arm)`,
      // 720 license checks of well under a second at 256 MB: a few thousandths of a dollar; the
      // brakes report's and the sealer's runs counted.
      monthly: sealerLambda + brakesLambda,
    },
    ...(sealing ? sealingRows(sealing) : []),
    {
      component: schedules === 1 ? 'SNS topic, EventBridge schedule' : 'SNS topic, EventBridge schedules',
      count: `${topics}, ${schedules}`,
      price: 'no charge without messages; scheduled rules are free',
      monthly: 0,
    },
  ];
}

/** The Markdown table of {@link idleCost}, with its total. */
export function idleCostTable(template: Template): string {
  const rows = idleCost(template);
  const total = rows.reduce((sum, row) => sum + row.monthly, 0);
  return [
    '| component | in the template | list price (us-east-1) | idle, a month |',
    '|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.component} | ${row.count} | ${row.price} | ${row.monthly < 0.005 ? '$0.00 (under $0.01)' : usd(row.monthly)} |`,
    ),
    `| **total** | | prices as known on ${PRICES_AS_OF} | **${usd(total)}** |`,
  ].join('\n');
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const TRIAL_DOC = join(ROOT, 'docs/deploy-trial.md');
const START = '<!-- idle-cost -->';
const END = '<!-- /idle-cost -->';

/** `text` with the part between the markers replaced by `table`. */
export function withTable(text: string, table: string): string {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start)
    throw new Error(`docs/deploy-trial.md: the ${START} ... ${END} markers are missing`);
  return `${text.slice(0, start + START.length)}\n${table}\n${text.slice(end)}`;
}

/** The trial stack's template, as `npm run synth -- -c environment=trial` makes it (bundling skipped). */
function synthTrial(): Template {
  const outdir = mkdtempSync(join(tmpdir(), 'erp-proxy-idle-cost-'));
  try {
    execFileSync(process.execPath, ['--import', 'tsx', 'bin/erp-proxy.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify({ environment: 'trial', 'aws:cdk:bundling-stacks': [] }),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return JSON.parse(readFileSync(join(outdir, 'ErpProxyTrial.template.json'), 'utf8')) as Template;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = readFileSync(TRIAL_DOC, 'utf8');
  const updated = withTable(text, idleCostTable(synthTrial()));
  if (process.argv.includes('--check')) {
    if (updated !== text) {
      process.stderr.write(
        'docs/deploy-trial.md: the idle cost table is out of date: run `npm run docs:cost`\n',
      );
      process.exit(1);
    }
  } else writeFileSync(TRIAL_DOC, updated);
}
