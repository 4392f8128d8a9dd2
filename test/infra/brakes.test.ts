/**
 * The operators' brakes in the stack (issue 58, docs/operators.md, "Stop an agent now"): the grants
 * on the brakes item of the state table (every function reads it, aux alone writes it, and the
 * stateful functions' store grant can no longer write it), the state table named to every function,
 * the aux function's 5-minute brakes report, and the two alarms (`BrakeForgotten`, `BrakesUnread`)
 * with the dashboard's row. Bundling is skipped, as in test/infra/audit-seal.test.ts. IAM's own
 * evaluation is AWS's: these assertions hold the stack to asking for it, and evaluate the
 * `dynamodb:LeadingKeys` conditions it writes for the keys the store uses.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import {
  BRAKES_ITEM_KEY,
  BRAKES_READ_OPERATIONS,
  BRAKES_WRITE_OPERATIONS,
} from '../../lambdas/platform/brakes/brakes-item.ts';
import { createBrakesSource } from '../../lambdas/platform/brakes/brakes-source.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { Dimension, METRIC_SPECS, MetricName } from '../../lambdas/platform/metrics/catalogue.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { recordBrakesReadFailure, recordOldestBrakeAge } from '../../lambdas/platform/metrics/record.ts';
import { FUNCTION_NAMES, type FunctionName, METRICS_NAMESPACE } from '../../lambdas/platform/names.ts';
import {
  BRAKES_AGE_EVENT,
  BRAKES_AGE_INTERVAL_MINUTES,
  isBrakesAgeEvent,
  isLicenseCheckEvent,
} from '../../lambdas/platform/scheduled-jobs.ts';
import { STATEFUL_FUNCTIONS } from '../../lambdas/platform/settings.ts';
import { STORE_KEY_PREFIX, STORE_OPERATIONS } from '../../lambdas/platform/state/state-store.ts';
import {
  BRAKES_ITEM_CONDITION,
  BRAKES_READERS,
  BRAKES_WRITER,
  ErpProxyStack,
  STATE_TABLE_CHECK_ROLE_OF,
  STORE_WRITE_CONDITION,
} from '../../lib/erp-proxy-stack.ts';
import { BRAKES_KEPT, BRAKES_RUNBOOK } from '../../lib/monitoring.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
};

interface Synth {
  readonly stack: ErpProxyStack;
  readonly template: Template;
  readonly fnIds: Record<FunctionName, string>;
  readonly roleIds: Record<FunctionName, string>;
  readonly tableId: string;
  readonly topicId: string;
}

function synth(context: Record<string, unknown> = {}): Synth {
  const app = testApp(context);
  const stack = new ErpProxyStack(app, 'ErpProxy', {
    config: parseStackConfig((key) => app.node.tryGetContext(key)),
  });
  const idOf = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const byFunction = (id: (name: FunctionName) => string) =>
    Object.fromEntries(FUNCTION_NAMES.map((name) => [name, id(name)])) as Record<FunctionName, string>;
  return {
    stack,
    template: Template.fromStack(stack),
    fnIds: byFunction((name) => idOf(stack.functions[name].function)),
    roleIds: byFunction((name) => idOf(stack.functions[name].role)),
    tableId: idOf(stack.stateTable),
    topicId: idOf(stack.alarmTopic),
  };
}

function resources(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

const listOf = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Whether a pattern with IAM's `*` and `?` wildcards covers `value`; `ignoreCase` for action names. */
function wildcardCovers(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}

/** Every statement of every role's policies (attached and inline), with the role's logical id. */
function roleStatements(template: Template): { role: string; statement: Statement }[] {
  const found: { role: string; statement: Statement }[] = [];
  for (const policy of Object.values(resources(template, 'AWS::IAM::Policy'))) {
    const roles = listOf(policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref);
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    for (const role of roles) for (const statement of statements) found.push({ role, statement });
  }
  for (const [role, resource] of Object.entries(resources(template, 'AWS::IAM::Role'))) {
    const inline = (resource.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[];
    for (const policy of inline)
      for (const statement of policy.PolicyDocument.Statement) found.push({ role, statement });
  }
  return found;
}

/** The statements of one role. */
function statementsOfRole(template: Template, roleId: string): Statement[] {
  return roleStatements(template)
    .filter((entry) => entry.role === roleId)
    .map((entry) => entry.statement);
}

/** Whether a statement's resources reach the state table (its ARN, or a wildcard). */
function reachesTable(statement: Statement, tableId: string): boolean {
  return listOf(statement.Resource).some(
    (resource) =>
      resource === '*' || JSON.stringify(resource) === JSON.stringify({ 'Fn::GetAtt': [tableId, 'Arn'] }),
  );
}

/**
 * Whether a statement's condition lets through a request whose one partition key is `key`, as IAM
 * evaluates the operators the stack writes on `dynamodb:LeadingKeys`; any other condition fails
 * the test (a new one must be evaluated here before it is trusted).
 */
function conditionAllowsKey(condition: unknown, key: string): boolean {
  if (condition === undefined) return true;
  return Object.entries(condition as Record<string, Record<string, unknown>>).every(([operator, byKey]) =>
    Object.entries(byKey).every(([conditionKey, values]) => {
      if (conditionKey !== 'dynamodb:LeadingKeys')
        throw new Error(`a condition key this test does not evaluate: ${conditionKey}`);
      const listed = listOf(values as string | string[]);
      switch (operator) {
        case 'ForAllValues:StringEquals':
          return listed.includes(key);
        case 'ForAllValues:StringNotEquals':
          return !listed.includes(key);
        case 'ForAllValues:StringLike':
          return listed.some((pattern) => wildcardCovers(pattern, key));
        case 'ForAllValues:StringNotLike':
          return !listed.some((pattern) => wildcardCovers(pattern, key));
        default:
          throw new Error(`a condition operator this test does not evaluate: ${operator}`);
      }
    }),
  );
}

/** The DynamoDB actions that write an item, whatever the API (single, batch, transaction, PartiQL). */
const ITEM_WRITES = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
];

/** `role action` for every grant of the stack that lets `action` (of `wanted`) reach the item `key` of the state table. */
function grantsOnItem(s: Synth, key: string, wanted: readonly string[]): string[] {
  const roleNames = new Map(FUNCTION_NAMES.map((name) => [s.roleIds[name], name as string]));
  const found: string[] = [];
  for (const { role, statement } of roleStatements(s.template)) {
    if (statement.Effect !== 'Allow' || !reachesTable(statement, s.tableId)) continue;
    if (!conditionAllowsKey(statement.Condition, key)) continue;
    for (const action of wanted) {
      if (listOf(statement.Action).some((pattern) => wildcardCovers(pattern, action, true)))
        found.push(`${roleNames.get(role) ?? role} ${action}`);
    }
  }
  return [...new Set(found)].sort();
}

function alarmNamed(template: Template, name: string): Record<string, unknown> {
  const alarms = Object.values(resources(template, 'AWS::CloudWatch::Alarm')).filter(
    (alarm) => alarm.Properties.AlarmName === name,
  );
  expect(alarms, name).toHaveLength(1);
  return alarms[0]!.Properties;
}

const dynamodb = (operations: readonly string[]) => operations.map((operation) => `dynamodb:${operation}`);

describe('the brakes, default settings', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  describe('grants on the brakes item', () => {
    const table = () => ({ 'Fn::GetAtt': [s.tableId, 'Arn'] });

    it('are derived from the brakes store: GetItem to read, PutItem to write, item brakes#set', () => {
      expect(BRAKES_ITEM_KEY).toBe('brakes#set');
      expect(BRAKES_ITEM_KEY.startsWith(STORE_KEY_PREFIX.brakes)).toBe(true);
      expect([...BRAKES_READ_OPERATIONS]).toEqual(['GetItem']);
      expect([...BRAKES_WRITE_OPERATIONS]).toEqual(['PutItem']);
      expect([...BRAKES_READERS].sort()).toEqual([...FUNCTION_NAMES].sort());
      expect(BRAKES_WRITER).toBe('aux');
    });

    it.each(FUNCTION_NAMES)('let %s read the brakes item, and that item alone', (name) => {
      const reads = statementsOfRole(s.template, s.roleIds[name]).filter((st) => st.Sid === 'ReadBrakes');
      expect(reads).toEqual([
        {
          Sid: 'ReadBrakes',
          Effect: 'Allow',
          Action: 'dynamodb:GetItem',
          Resource: table(),
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['brakes#set'] } },
        },
      ]);
      expect(grantsOnItem(s, BRAKES_ITEM_KEY, ['dynamodb:GetItem'])).toContain(`${name} dynamodb:GetItem`);
    });

    it('let the aux function alone write it, with PutItem on that item alone', () => {
      const writes = statementsOfRole(s.template, s.roleIds.aux).filter((st) => st.Sid === 'WriteBrakes');
      expect(writes).toEqual([
        {
          Sid: 'WriteBrakes',
          Effect: 'Allow',
          Action: 'dynamodb:PutItem',
          Resource: table(),
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['brakes#set'] } },
        },
      ]);
      // No role of the stack but aux's may write the item, through any API.
      expect(grantsOnItem(s, BRAKES_ITEM_KEY, ITEM_WRITES)).toEqual(['aux dynamodb:PutItem']);
      // Nor any other key under the brakes' prefix: aux's grant is the item's alone.
      expect(grantsOnItem(s, `${STORE_KEY_PREFIX.brakes}other`, ITEM_WRITES)).toEqual([]);
    });

    it("keep the stateful functions' store writes off the brakes (a condition on their grant), and on every other item", () => {
      expect(STORE_WRITE_CONDITION).toEqual({
        'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': ['brakes#*'] },
      });
      for (const name of STATEFUL_FUNCTIONS) {
        const writes = statementsOfRole(s.template, s.roleIds[name]).filter((st) => st.Sid === 'WriteState');
        expect(writes, name).toEqual([
          {
            Sid: 'WriteState',
            Effect: 'Allow',
            Action: dynamodb(STORE_OPERATIONS).sort(),
            Resource: table(),
            Condition: { 'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': ['brakes#*'] } },
          },
        ]);
      }
      // Every other kind of item the store writes stays writable by the three, with every store
      // operation: the idempotency records, the limits' counters and slots, and the deploy's check
      // item (written with execute-v1's role).
      expect(STATE_TABLE_CHECK_ROLE_OF).toBe('execute-v1');
      for (const [kind, prefix] of Object.entries(STORE_KEY_PREFIX)) {
        if (kind === 'brakes') continue;
        expect(grantsOnItem(s, `${prefix}0f2e7c3a`, dynamodb(STORE_OPERATIONS)), prefix).toEqual(
          STATEFUL_FUNCTIONS.flatMap((name) =>
            dynamodb(STORE_OPERATIONS).map((action) => `${name} ${action}`),
          ).sort(),
        );
      }
    });

    it("run the deploy's table check again at the deploy that brings the condition: its description names it", () => {
      const checkId = s.stack.getLogicalId(
        s.stack.stateTableCheck.function.function.node.defaultChild as CfnElement,
      );
      const description = String(
        resources(s.template, 'AWS::Lambda::Function')[checkId]?.Properties.Description,
      );
      expect(description).toContain('on any item but brakes#*');
      expect(description).toContain(STORE_OPERATIONS.join(', '));
    });

    it('leave the version function nothing else of the table, and aux nothing but the brakes', () => {
      for (const name of ['version', 'aux'] as const) {
        const statements = statementsOfRole(s.template, s.roleIds[name]);
        const onTable = statements.filter((st) => JSON.stringify(st.Resource).includes(`"${s.tableId}"`));
        expect(
          onTable.map((st) => st.Sid),
          name,
        ).toEqual(name === 'aux' ? ['ReadBrakes', 'WriteBrakes'] : ['ReadBrakes']);
        for (const statement of onTable) expect(statement.Condition, name).toEqual(BRAKES_ITEM_CONDITION);
      }
      // The version function's only DynamoDB grant, on any table: the brakes' read.
      const versionDynamo = statementsOfRole(s.template, s.roleIds.version).filter((st) =>
        listOf(st.Action).some((action) => action.startsWith('dynamodb:')),
      );
      expect(versionDynamo.map((st) => st.Sid)).toEqual(['ReadBrakes']);
      // Nothing of the table outside the brakes item: not a record, a counter or the check item.
      for (const [kind, prefix] of Object.entries(STORE_KEY_PREFIX)) {
        if (kind === 'brakes') continue;
        const granted = grantsOnItem(s, `${prefix}0f2e7c3a`, ['dynamodb:GetItem', ...ITEM_WRITES]);
        expect(
          granted.filter((grant) => /^(version|aux) /.test(grant)),
          prefix,
        ).toEqual([]);
      }
    });
  });

  it('names the state table to every function, the version function included (it reads the brakes there)', () => {
    const functions = resources(s.template, 'AWS::Lambda::Function');
    for (const name of FUNCTION_NAMES) {
      const variables = (
        functions[s.fnIds[name]]!.Properties.Environment as { Variables: Record<string, unknown> }
      ).Variables;
      expect(variables.STATE_TABLE, name).toEqual({ Ref: s.tableId });
      expect(variables.BRAKES_REFRESH, name).toBe('5');
    }
  });

  describe('the brakes report', () => {
    it(`runs every ${BRAKES_AGE_INTERVAL_MINUTES} minutes, sending the aux function exactly the event its handler takes for the report`, () => {
      const ruleId = s.stack.getLogicalId(s.stack.brakesAgeSchedule.node.defaultChild as CfnElement);
      const rules = Object.entries(resources(s.template, 'AWS::Events::Rule')).filter(([, rule]) =>
        JSON.stringify(rule.Properties.Targets).includes(`"${s.fnIds.aux}"`),
      );
      // The license check's and this one.
      expect(rules.map(([id]) => id).sort()).toEqual(
        [ruleId, s.stack.getLogicalId(s.stack.licenseCheckSchedule.node.defaultChild as CfnElement)].sort(),
      );
      expect(ruleId).toMatch(/^BrakesAgeSchedule/);
      const rule = resources(s.template, 'AWS::Events::Rule')[ruleId]!.Properties;
      expect(BRAKES_AGE_INTERVAL_MINUTES).toBe(5);
      expect(rule).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
      expect(rule.EventPattern).toBeUndefined();
      const targets = rule.Targets as { Arn: unknown; Input: string; RetryPolicy: unknown }[];
      expect(targets).toHaveLength(1);
      expect(targets[0]?.Arn).toEqual({ 'Fn::GetAtt': [s.fnIds.aux, 'Arn'] });
      const input: unknown = JSON.parse(targets[0]!.Input);
      expect(input).toEqual(BRAKES_AGE_EVENT);
      expect(input).toEqual({ erp_proxy_job: 'brakes-age' });
      expect(isBrakesAgeEvent(input)).toBe(true);
      expect(isLicenseCheckEvent(input)).toBe(false);
      // A report not delivered within its interval is replaced by the next one.
      expect(targets[0]?.RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 });
    });

    it('may invoke the aux function for this rule only', () => {
      const ruleId = s.stack.getLogicalId(s.stack.brakesAgeSchedule.node.defaultChild as CfnElement);
      const permissions = Object.values(resources(s.template, 'AWS::Lambda::Permission')).filter(
        (permission) =>
          JSON.stringify(permission.Properties.SourceArn) ===
          JSON.stringify({ 'Fn::GetAtt': [ruleId, 'Arn'] }),
      );
      expect(permissions.map((permission) => permission.Properties)).toEqual([
        {
          Action: 'lambda:InvokeFunction',
          FunctionName: { 'Fn::GetAtt': [s.fnIds.aux, 'Arn'] },
          Principal: 'events.amazonaws.com',
          SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
        },
      ]);
    });
  });

  describe('alarms', () => {
    it('BrakeForgotten: the oldest brake in force at least 60 minutes (the default), from the 5-minute report', () => {
      const alarm = alarmNamed(s.template, 'ErpProxy-BrakeForgotten');
      expect(alarm).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: MetricName.OldestBrakeAge,
        Dimensions: [{ Name: Dimension.Service, Value: 'erp-proxy' }],
        Statistic: 'Maximum',
        Period: 300,
        EvaluationPeriods: 1,
        Threshold: 60,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        // A report that fails records nothing (AuxErrors fires instead); no report is no brake.
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: s.topicId }],
        OKActions: [{ Ref: s.topicId }],
      });
      const description = String(alarm.AlarmDescription);
      expect(description).toContain('60 minutes');
      expect(description).toContain('npm run brakes -- release');
      expect(BRAKES_RUNBOOK).toBe('docs/operators.md#stop-an-agent-now');
      expect(description).toContain(BRAKES_RUNBOOK);
    });

    it('BrakesUnread: at least one failed read of the brakes in 5 minutes, whatever the instance kept', () => {
      const alarm = alarmNamed(s.template, 'ErpProxy-BrakesUnread');
      expect(alarm).toMatchObject({
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: s.topicId }],
        OKActions: [{ Ref: s.topicId }],
      });
      const metrics = alarm.Metrics as {
        Id: string;
        Expression?: string;
        MetricStat?: {
          Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: string }[] };
          Period: number;
          Stat: string;
        };
      }[];
      expect(metrics.find((metric) => metric.Expression !== undefined)?.Expression).toBe(
        'FILL(last, 0) + FILL(none, 0)',
      );
      const watched = metrics.flatMap((metric) => (metric.MetricStat ? [metric.MetricStat] : []));
      expect(
        watched.map((stat) => [stat.Metric.MetricName, stat.Metric.Namespace, stat.Period, stat.Stat]),
      ).toEqual([
        [MetricName.BrakesReadFailures, METRICS_NAMESPACE, 300, 'Sum'],
        [MetricName.BrakesReadFailures, METRICS_NAMESPACE, 300, 'Sum'],
      ]);
      expect(watched.map((stat) => stat.Metric.Dimensions)).toEqual(
        BRAKES_KEPT.map((kept) => [
          { Name: Dimension.Kept, Value: kept },
          { Name: Dimension.Service, Value: 'erp-proxy' },
        ]),
      );
      const description = String(alarm.AlarmDescription);
      expect(description).toMatch(/kept=last/);
      expect(description).toMatch(/kept=none.*fail open/);
      expect(description).toContain(BRAKES_RUNBOOK);
    });

    it('watch the series the runtime records: what an instance keeps, and the report without a dimension of its own', async () => {
      // What a brakes source reports when its reads fail: `none` before any read, `last` after one.
      const kept: string[] = [];
      let failing = true;
      const source = createBrakesSource({
        store: {
          read: async () => {
            if (failing) throw new Error('down');
            return { version: 1, brakes: [] };
          },
          write: async () => true,
        },
        refreshMs: 1_000,
        onReadFailure: (failure) => kept.push(failure.kept),
      });
      await source.read(0);
      failing = false;
      await source.read(1_000);
      failing = true;
      await source.read(2_000);
      expect(kept).toEqual(['none', 'last']);
      expect([...BRAKES_KEPT].sort()).toEqual([...new Set(kept)].sort());

      const store = new LocalMetricsStore();
      const metrics = createMetrics(loadConfig({}), { store });
      for (const value of kept) recordBrakesReadFailure(metrics, value as 'last' | 'none');
      recordOldestBrakeAge(metrics, 61);
      metrics.publishStoredMetrics();
      const records = store.recentRecords().map(
        (line) =>
          JSON.parse(line) as Record<string, unknown> & {
            _aws: {
              CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
            };
          },
      );
      const seriesOf = (name: string) =>
        records
          .filter((record) =>
            record._aws.CloudWatchMetrics[0]!.Metrics.some((metric) => metric.Name === name),
          )
          .map((record) => {
            const directive = record._aws.CloudWatchMetrics[0]!;
            expect(directive.Namespace).toBe(METRICS_NAMESPACE);
            return Object.fromEntries(
              directive.Dimensions[0]!.map((dimension) => [dimension, record[dimension]]),
            );
          });
      expect(seriesOf(MetricName.BrakesReadFailures)).toEqual(
        kept.map((value) => ({ [Dimension.Service]: 'erp-proxy', [Dimension.Kept]: value })),
      );
      expect(seriesOf(MetricName.OldestBrakeAge)).toEqual([{ [Dimension.Service]: 'erp-proxy' }]);
      const specOf = (name: string) => METRIC_SPECS.find((spec) => spec.name === name)?.dimensions;
      expect(specOf(MetricName.OldestBrakeAge)).toEqual([]);
      expect(specOf(MetricName.BrakesReadFailures)).toEqual([Dimension.Kept]);
      expect(specOf(MetricName.Braked)).toEqual([Dimension.Scope, Dimension.Mode]);
    });

    it("Api5xxRate says a brake's refusals (-32012, HTTP 503) count there, and the Braked metric tells them apart", () => {
      const description = String(alarmNamed(s.template, 'ErpProxy-Api5xxRate').AlarmDescription);
      expect(description).toContain('-32012');
      expect(description).toContain('Braked');
    });

    it('show on the dashboard: braked calls by scope and mode, the oldest brake, the failed reads', () => {
      const body = JSON.stringify(Object.values(resources(s.template, 'AWS::CloudWatch::Dashboard'))[0]);
      expect(body).toContain(
        `SEARCH('{${METRICS_NAMESPACE},${Dimension.Scope},${Dimension.Mode},${Dimension.Service}} MetricName=\\\\\\"${MetricName.Braked}\\\\\\"`,
      );
      for (const metric of [MetricName.OldestBrakeAge, MetricName.BrakesReadFailures])
        expect(body).toContain(`\\"${metric}\\"`);
      expect(body).toContain('Oldest brake in force (minutes)');
    });
  });
});

describe('the brakes alarm from context', () => {
  it('takes alarmBrakeAgeMinutes (a number, or a string from -c)', () => {
    for (const value of [240, '240']) {
      const s = synth({ alarmBrakeAgeMinutes: value });
      const alarm = alarmNamed(s.template, 'ErpProxy-BrakeForgotten');
      expect(alarm.Threshold).toBe(240);
      expect(String(alarm.AlarmDescription)).toContain('240 minutes');
    }
  });

  it('stops the synth on a value below the report interval, naming the key', () => {
    expect(() => synth({ alarmBrakeAgeMinutes: 1 })).toThrow(/alarmBrakeAgeMinutes/);
  });
});
