/**
 * The audit's part of the stack (issue 56, docs/guide/audit.md): its own
 * DynamoDB table, each function's actions on it (execute-v1, execute-v2 and mcp write, aux reads,
 * version nothing), the digest key's secret, the settings the functions get, the
 * `AuditWriteFailures` alarm, the dashboard and the outputs. Bundling is skipped, as in
 * test/infra/erp-proxy-stack.test.ts.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AUDIT_READ_OPERATIONS,
  AUDIT_TABLE,
  AUDIT_WRITE_OPERATIONS,
  AUDIT_WRITER_LEADING_KEYS,
  newAuditId,
  pointerPartition,
  recordPartition,
} from '../../lambdas/platform/audit/audit-record.ts';
import { digestKeyOf } from '../../lambdas/platform/audit/digest-key.ts';
import { SEAL_HEAD_KEY } from '../../lambdas/platform/audit/seal-head.ts';
import { PENDING_MARGIN_SECONDS } from '../../lambdas/platform/function-timeout.ts';
import { Dimension, METRIC_SPECS, MetricName } from '../../lambdas/platform/metrics/catalogue.ts';
import type { FunctionName } from '../../lambdas/platform/names.ts';
import {
  AUDIT_PENDING_MARGIN_SECONDS,
  AUDIT_READER,
  AUDIT_WRITERS,
  ErpProxyStack,
  FUNCTION_IDS,
  SECRET_VALUE_SOURCES,
} from '../../lib/erp-proxy-stack.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';

const FUNCTION_NAMES = Object.keys(FUNCTION_IDS) as FunctionName[];
const WRITERS: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'mcp'];

interface Synth {
  readonly stack: ErpProxyStack;
  readonly template: Template;
  readonly fnIds: Record<FunctionName, string>;
  readonly auditTableId: string;
  readonly digestSecretId: string;
}

function synth(context: Record<string, unknown> = {}): Synth {
  const app = testApp(context);
  const stack = new ErpProxyStack(app, 'ErpProxy', {
    config: parseStackConfig((key) => app.node.tryGetContext(key)),
  });
  const idOf = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return {
    stack,
    template: Template.fromStack(stack),
    fnIds: Object.fromEntries(
      FUNCTION_NAMES.map((name) => [name, idOf(stack.functions[name].function)]),
    ) as Record<FunctionName, string>,
    auditTableId: idOf(stack.auditTable),
    digestSecretId: idOf(stack.auditDigestSecret),
  };
}

type Resource = {
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

function resources(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

function propsOf(template: Template, type: string, logicalId: string): Record<string, unknown> {
  const resource = resources(template, type)[logicalId];
  if (!resource) throw new Error(`no ${type} ${logicalId} in the template`);
  return resource.Properties;
}

const listOf = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The statements of the policies attached to a function's role. */
function statementsOfFunction(s: Synth, name: FunctionName): Statement[] {
  const role = (
    propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).Role as { 'Fn::GetAtt': [string] }
  )['Fn::GetAtt'][0];
  return Object.values(resources(s.template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${role}"`))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** Each `action resource` pair a function's role is granted on the audit table or its indexes. */
function auditGrants(s: Synth, name: FunctionName): string[] {
  return statementsOfFunction(s, name)
    .flatMap((st) =>
      listOf(st.Resource).flatMap((resource) =>
        listOf(st.Action).map((action) => ({
          action,
          resource: JSON.stringify(resource),
          effect: st.Effect,
        })),
      ),
    )
    .filter((grant) => grant.resource.includes(s.auditTableId))
    .map((grant) => {
      expect(grant.effect).toBe('Allow');
      return `${grant.action} ${grant.resource}`;
    })
    .sort();
}

function envOf(s: Synth, name: FunctionName): Record<string, unknown> {
  return (
    propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;
}

describe('the audit table', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  it('is a table of its own: on demand, keyed pk/sk (strings), the by-actor index, TTL on expires_at, PITR, deletion protection, encrypted', () => {
    expect(AUDIT_TABLE).toMatchObject({
      partitionKey: 'pk',
      sortKey: 'sk',
      actorIndex: 'by-actor',
      actorAttribute: 'actor',
      ttlAttribute: 'expires_at',
    });
    expect(s.auditTableId).not.toBe(s.stack.getLogicalId(s.stack.stateTable.node.defaultChild as CfnElement));
    expect(propsOf(s.template, 'AWS::DynamoDB::Table', s.auditTableId)).toEqual({
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'actor', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'by-actor',
          KeySchema: [
            { AttributeName: 'actor', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('is kept whatever happens to the stack: deleted, replaced, or a first create rolled back', () => {
    const table = resources(s.template, 'AWS::DynamoDB::Table')[s.auditTableId];
    expect(table?.DeletionPolicy).toBe('Retain');
    expect(table?.UpdateReplacePolicy).toBe('Retain');
  });

  it('is written by execute-v1, execute-v2 and mcp with exactly PutItem and UpdateItem, on the table alone', () => {
    expect([...AUDIT_WRITERS].sort()).toEqual([...WRITERS].sort());
    expect([...AUDIT_WRITE_OPERATIONS].sort()).toEqual(['PutItem', 'UpdateItem']);
    const table = JSON.stringify({ 'Fn::GetAtt': [s.auditTableId, 'Arn'] });
    for (const name of WRITERS) {
      expect(auditGrants(s, name), name).toEqual([
        `dynamodb:PutItem ${table}`,
        `dynamodb:UpdateItem ${table}`,
      ]);
    }
  });

  it('lets the writers write records and pointers only (dynamodb:LeadingKeys), never the seal head', () => {
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        (policy.Properties.PolicyDocument.Statement as { Sid?: string; Condition?: unknown }[]) ?? [],
    );
    const writes = statements.filter((statement) => statement.Sid === 'WriteAuditRecords');
    expect(writes).toHaveLength(WRITERS.length);
    for (const statement of writes) {
      expect(statement.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['t#*', 'r#*'] },
      });
    }
    const allowed = (key: string) =>
      AUDIT_WRITER_LEADING_KEYS.some((pattern) => key.startsWith(pattern.slice(0, -1)));
    expect(allowed(recordPartition(newAuditId(Date.now())))).toBe(true);
    expect(allowed(pointerPartition('res.partner', 42))).toBe(true);
    expect(allowed(SEAL_HEAD_KEY)).toBe(false);
  });

  it('is read by aux with exactly Query, GetItem and BatchGetItem, on the table and its by-actor index', () => {
    expect(AUDIT_READER).toBe('aux');
    expect([...AUDIT_READ_OPERATIONS].sort()).toEqual(['BatchGetItem', 'GetItem', 'Query']);
    const table = JSON.stringify({ 'Fn::GetAtt': [s.auditTableId, 'Arn'] });
    const index = JSON.stringify({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [s.auditTableId, 'Arn'] }, '/index/by-actor']],
    });
    expect(auditGrants(s, 'aux')).toEqual(
      ['BatchGetItem', 'GetItem', 'Query']
        .flatMap((op) => [`dynamodb:${op} ${index}`, `dynamodb:${op} ${table}`])
        .sort(),
    );
    // No write, no delete, no scan: nothing else on the table for aux.
    for (const grant of auditGrants(s, 'aux')) expect(grant).not.toMatch(/Put|Update|Delete|Scan|Write/);
  });

  it('is not reached by the version function, nor by any role other than the four functions and the audit sealer', () => {
    expect(auditGrants(s, 'version')).toEqual([]);
    const policiesOnTable = Object.entries(resources(s.template, 'AWS::IAM::Policy'))
      .filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes(s.auditTableId))
      .map(([id]) => id)
      .sort();
    const policyOf = (role: { node: { findChild(id: string): { node: { defaultChild?: unknown } } } }) =>
      s.stack.getLogicalId(role.node.findChild('DefaultPolicy').node.defaultChild as CfnElement);
    const sealer = s.stack.auditSealing?.sealer;
    if (!sealer) throw new Error('auditSealing is on by default');
    // The sealer's grants on the table: test/infra/audit-seal.test.ts.
    const ofFunctions = [
      ...[...WRITERS, 'aux' as const].map((name) => policyOf(s.stack.functions[name].role)),
      policyOf(sealer.role),
    ].sort();
    expect(policiesOnTable).toEqual(ofFunctions);
  });

  it('is named to execute-v1, execute-v2, mcp and aux (AUDIT_TABLE), never to version', () => {
    for (const name of FUNCTION_NAMES) {
      const expected = name === 'version' ? undefined : { Ref: s.auditTableId };
      expect(envOf(s, name).AUDIT_TABLE, name).toEqual(expected);
    }
  });

  it('gives execute-v1, execute-v2, mcp and aux the deployed AUDIT and AUDIT_RETENTION_DAYS (defaults on and 400)', () => {
    for (const name of FUNCTION_NAMES) {
      const env = envOf(s, name);
      if (name === 'version') {
        expect(env.AUDIT, name).toBeUndefined();
        expect(env.AUDIT_RETENTION_DAYS, name).toBeUndefined();
      } else {
        expect(env.AUDIT, name).toBe('on');
        expect(env.AUDIT_RETENTION_DAYS, name).toBe('400');
      }
    }
  });

  it('tells aux alone when a pending record reads unknown: the writing functions’ timeout (28 s) + 30', () => {
    expect(AUDIT_PENDING_MARGIN_SECONDS).toBe(PENDING_MARGIN_SECONDS);
    for (const name of FUNCTION_NAMES) {
      expect(envOf(s, name).AUDIT_PENDING_AFTER, name).toBe(name === 'aux' ? '58' : undefined);
    }
    // aux's own timeout (10 s) is not the one that counts.
    expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds.aux).Timeout).toBe(10);
    expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds['execute-v1']).Timeout).toBe(28);
  });

  it('has an alarm on AuditWriteFailures: Sum >= 1 in 5 minutes, missing data OK, notifying the topic on ALARM and OK', () => {
    // The runtime counts the failures with the service dimension only.
    const definition = METRIC_SPECS.find((metric) => metric.name === MetricName.AuditWriteFailures);
    expect(definition?.dimensions).toEqual([]);
    const alarms = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).filter(
      (alarm) => alarm.Properties.AlarmName === 'ErpProxy-AuditWriteFailures',
    );
    expect(alarms).toHaveLength(1);
    const topic = { Ref: s.stack.getLogicalId(s.stack.alarmTopic.node.defaultChild as CfnElement) };
    expect(alarms[0]?.Properties).toMatchObject({
      Namespace: 'ErpProxy',
      MetricName: 'AuditWriteFailures',
      Dimensions: [{ Name: Dimension.Service, Value: 'erp-proxy' }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic],
      OKActions: [topic],
    });
    expect(alarms[0]?.Properties.DatapointsToAlarm).toBeUndefined();
  });

  it('shows the audit records by outcome and the write failures on the dashboard', () => {
    const body = JSON.stringify(Object.values(resources(s.template, 'AWS::CloudWatch::Dashboard'))[0]);
    expect(body).toContain(
      `SEARCH('{ErpProxy,${Dimension.Outcome},${Dimension.Service}} MetricName=\\\\\\"AuditRecords\\\\\\"`,
    );
    expect(body).toContain('\\"AuditWriteFailures\\"');
    expect(body).toContain('Audit records by outcome');
  });

  it('outputs the table name and the digest secret ARN', () => {
    s.template.hasOutput('AuditTableName', { Value: { Ref: s.auditTableId } });
    s.template.hasOutput('AuditDigestSecretArn', { Value: { Ref: s.digestSecretId } });
  });
});

describe('the audit digest secret', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  it('is generated by the stack: 64 characters without punctuation, a plain string (no JSON template)', () => {
    expect(SECRET_VALUE_SOURCES.auditDigest).toEqual({
      passwordLength: 64,
      excludePunctuation: true,
      includeSpace: false,
    });
    expect(propsOf(s.template, 'AWS::SecretsManager::Secret', s.digestSecretId).GenerateSecretString).toEqual(
      {
        PasswordLength: 64,
        ExcludePunctuation: true,
        IncludeSpace: false,
      },
    );
    expect(propsOf(s.template, 'AWS::SecretsManager::Secret', s.digestSecretId).SecretString).toBeUndefined();
    // A value of that shape is a key the runtime takes (at least 32 characters).
    expect(() => digestKeyOf('A'.repeat(64))).not.toThrow();
  });

  it('is kept when it leaves the stack or is replaced, as the other created secrets', () => {
    const secret = resources(s.template, 'AWS::SecretsManager::Secret')[s.digestSecretId];
    expect(secret).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
  });

  it('is named to execute-v1, execute-v2 and mcp (AUDIT_DIGEST_SECRET_ID), which alone may read it', () => {
    for (const name of FUNCTION_NAMES) {
      const writer = WRITERS.includes(name);
      expect(envOf(s, name).AUDIT_DIGEST_SECRET_ID, name).toEqual(
        writer ? { Ref: s.digestSecretId } : undefined,
      );
      const reads = statementsOfFunction(s, name).filter((st) =>
        listOf(st.Resource).some(
          (resource) => JSON.stringify(resource) === JSON.stringify({ Ref: s.digestSecretId }),
        ),
      );
      expect(reads.flatMap((st) => listOf(st.Action)).sort(), name).toEqual(
        writer ? ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'] : [],
      );
    }
    // No other role (the deploy check's provider, ...) reads it.
    const readers = Object.values(resources(s.template, 'AWS::IAM::Policy')).filter((policy) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes(s.digestSecretId),
    );
    expect(readers).toHaveLength(WRITERS.length);
  });

  it('is read through the Parameters and Secrets extension, which every writing function has', () => {
    for (const name of WRITERS) {
      expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).Layers, name).toHaveLength(1);
      expect(envOf(s, name).PARAMETERS_SECRETS_EXTENSION_HTTP_PORT, name).toBe('2773');
    }
  });
});

describe('the audit settings deploy from context', () => {
  it('passes audit and auditRetentionDays, and derives AUDIT_PENDING_AFTER from lambdaTimeout', () => {
    const s = synth({ audit: 'best-effort', auditRetentionDays: 30, lambdaTimeout: 20, maxTimeout: 18 });
    for (const name of [...WRITERS, 'aux' as const]) {
      expect(envOf(s, name), name).toMatchObject({ AUDIT: 'best-effort', AUDIT_RETENTION_DAYS: '30' });
    }
    expect(envOf(s, 'aux').AUDIT_PENDING_AFTER).toBe('50');
  });

  it('stops the synth on an audit mode it does not know, naming the key', () => {
    expect(() => synth({ audit: 'sometimes' })).toThrow(/audit/);
  });
});
