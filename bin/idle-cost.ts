/**
 * @module idle-cost
 * `npm run docs:cost`: the idle monthly cost of the trial stack (environments/trial.json), by
 * component, counted from the synthesized template (never by hand) and priced with the list prices
 * below, written into docs/deploy-trial.md between `<!-- idle-cost -->` markers (`-- --check`
 * only compares). "Idle": deployed, no calls; only the hourly license check runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  dynamoStoredGbMonth: 0.25,
  httpApiMillion: 1,
  lambdaRequestMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334,
});

/** Hours in the month the idle cost counts (30 days). */
const HOURS_A_MONTH = 720;

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

/** The idle monthly cost of `template`, by component. */
export function idleCost(template: Template): CostRow[] {
  const secrets = ofType(template, 'AWS::SecretsManager::Secret').length;
  const alarms = ofType(template, 'AWS::CloudWatch::Alarm');
  const alarmMetricCount = alarms.reduce((sum, alarm) => sum + alarmMetrics(alarm), 0);
  const dashboards = ofType(template, 'AWS::CloudWatch::Dashboard').length;
  const schedules = ofType(template, 'AWS::Events::Rule').length;
  const logGroups = ofType(template, 'AWS::Logs::LogGroup').length;
  const tables = ofType(template, 'AWS::DynamoDB::Table').length;
  const apis = ofType(template, 'AWS::ApiGatewayV2::Api').length;
  const functions = ofType(template, 'AWS::Lambda::Function').length;
  const topics = ofType(template, 'AWS::SNS::Topic').length;
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
      component: 'custom metrics (the hourly license check records `LicenseDaysLeft`)',
      count: `${schedules} (one per scheduled check)`,
      price: `${price(PRICES.customMetricMonth)} per metric-month`,
      monthly: schedules * PRICES.customMetricMonth,
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
      price: `${price(PRICES.dynamoWriteMillion)} per million write units, ${price(PRICES.dynamoStoredGbMonth)} per GB-month; nothing without requests or records`,
      monthly: 0,
    },
    {
      component: 'API Gateway HTTP API',
      count: String(apis),
      price: `${price(PRICES.httpApiMillion)} per million requests`,
      monthly: 0,
    },
    {
      component: 'Lambda functions',
      count: `${functions} (the hourly check: ${schedules * HOURS_A_MONTH} invocations a month)`,
      price: `${price(PRICES.lambdaRequestMillion)} per million requests, ${price(PRICES.lambdaArmGbSecond)} per GB-second (Arm)`,
      // 720 invocations of well under a second at 256 MB: a few thousandths of a dollar.
      monthly: 0,
    },
    {
      component: 'SNS topic, EventBridge schedule',
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
        `| ${row.component} | ${row.count} | ${row.price} | ${row.monthly === 0 ? '$0.00 (under $0.01)' : usd(row.monthly)} |`,
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
