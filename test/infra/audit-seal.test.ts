/**
 * The audit's sealing in the stack (issue 57, docs/guide/audit.md, "Sealed"): the Object Lock
 * bucket of the sealed windows and its policy, the asymmetric key that signs the seals and its
 * policy (only the sealer signs), the sealer function, its grants and its two schedules, the alarms,
 * the outputs; none of it with `auditSealing=off`; and no request-serving function that may write
 * to the bucket or sign. Bundling is skipped, as in test/infra/audit-table.test.ts. Object Lock's
 * own guarantees (no one changes or deletes a locked version) are S3's: these assertions hold the
 * stack to asking for them.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_SEALER_OPERATIONS, AUDIT_TABLE } from '../../lambdas/platform/audit/audit-record.ts';
import { sealerSettings } from '../../lambdas/platform/audit/sealer-parts.ts';
import { awsSealerParts } from '../../lambdas/platform/audit/sealer-parts-aws.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { Dimension, METRIC_SPECS, MetricName } from '../../lambdas/platform/metrics/catalogue.ts';
import { FUNCTION_NAMES } from '../../lambdas/platform/names.ts';
import {
  AUDIT_SEAL_EVENT,
  AUDIT_VERIFY_EVENT,
  AUDIT_VERIFY_HOURS,
  auditJobOf,
} from '../../lambdas/platform/scheduled-jobs.ts';
import {
  AUDIT_BUCKET_GUARDED_WRITES,
  AUDIT_SEAL_KEY_ADMIN_ACTIONS,
  AUDIT_SEALER_BUCKET_ACTIONS,
  AUDIT_SEALER_ENTRY,
  AUDIT_SEALER_KEY_ACTIONS,
  AUDIT_SEALER_OBJECT_ACTIONS,
  type AuditSealing,
  ErpProxyStack,
} from '../../lib/erp-proxy-stack.ts';
import { AUDIT_SEAL_LAG_WINDOWS } from '../../lib/monitoring.ts';
import { esbuildOptions } from '../../lib/proxy-function.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
};
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Principal?: unknown;
  Condition?: unknown;
};

interface Synth {
  readonly stack: ErpProxyStack;
  readonly template: Template;
  readonly sealing: AuditSealing;
  readonly ids: {
    readonly bucket: string;
    readonly key: string;
    readonly sealer: string;
    readonly sealerRole: string;
    readonly sealerPolicy: string;
    readonly auditTable: string;
    readonly topic: string;
  };
}

const idOf = (stack: ErpProxyStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

function synthStack(context: Record<string, unknown> = {}): { stack: ErpProxyStack; template: Template } {
  const app = testApp(context);
  const stack = new ErpProxyStack(app, 'ErpProxy', {
    config: parseStackConfig((key) => app.node.tryGetContext(key)),
  });
  return { stack, template: Template.fromStack(stack) };
}

function synth(context: Record<string, unknown> = {}): Synth {
  const { stack, template } = synthStack(context);
  const sealing = stack.auditSealing;
  if (!sealing) throw new Error('auditSealing is off in this synth');
  return {
    stack,
    template,
    sealing,
    ids: {
      bucket: idOf(stack, sealing.bucket),
      key: idOf(stack, sealing.key),
      sealer: idOf(stack, sealing.sealer.function),
      sealerRole: idOf(stack, sealing.sealer.role),
      sealerPolicy: idOf(stack, sealing.sealer.role.node.findChild('DefaultPolicy')),
      auditTable: idOf(stack, stack.auditTable),
      topic: idOf(stack, stack.alarmTopic),
    },
  };
}

function resources(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

function resourceOf(template: Template, type: string, logicalId: string): Resource {
  const resource = resources(template, type)[logicalId];
  if (!resource) throw new Error(`no ${type} ${logicalId} in the template`);
  return resource;
}

const listOf = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Whether an IAM action pattern (`*` and `?` wildcards, case-insensitive) covers `action`. */
function covers(pattern: string, action: string): boolean {
  const regex = new RegExp(
    `^${pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
    'i',
  );
  return regex.test(action);
}

/** The statements of every policy attached to a role, by the role's logical id. */
function roleStatements(template: Template, roleId: string): Statement[] {
  return Object.values(resources(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function roleOfFunction(template: Template, fnId: string): string {
  const role = resourceOf(template, 'AWS::Lambda::Function', fnId).Properties.Role as {
    'Fn::GetAtt': [string, string];
  };
  return role['Fn::GetAtt'][0];
}

function alarmNamed(template: Template, name: string): Record<string, unknown> {
  const alarms = Object.values(resources(template, 'AWS::CloudWatch::Alarm')).filter(
    (alarm) => alarm.Properties.AlarmName === name,
  );
  expect(alarms, name).toHaveLength(1);
  return alarms[0]!.Properties;
}

const getAtt = (id: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [id, attribute] });
const objectsOf = (bucketId: string) => ({ 'Fn::Join': ['', [getAtt(bucketId), '/*']] });

/** The logical ids a resource refers to (Ref, Fn::GetAtt, DependsOn). */
function referencesOf(resource: Resource): Set<string> {
  const found = new Set<string>(listOf(resource.DependsOn));
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'Ref' && typeof inner === 'string') found.add(inner);
        else if (key === 'Fn::GetAtt' && Array.isArray(inner)) found.add(String(inner[0]));
        else walk(inner);
      }
    }
  };
  walk(resource.Properties);
  return found;
}

describe('audit sealing, default settings (compliance)', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  describe('the bucket of the sealed windows', () => {
    it('keeps its logical id (a new one would be a new bucket, its Object Lock chosen again)', () => {
      expect(s.ids.bucket).toBe('AuditSealBucket3C68E3A5');
      s.template.resourceCountIs('AWS::S3::Bucket', 1);
    });

    it('has Object Lock in compliance mode, retained auditRetentionDays (400) by default, versioned', () => {
      expect(resourceOf(s.template, 'AWS::S3::Bucket', s.ids.bucket).Properties).toMatchObject({
        ObjectLockEnabled: true,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 400 } },
        },
        VersioningConfiguration: { Status: 'Enabled' },
      });
    });

    it('blocks all public access, is encrypted (S3 managed keys), and is kept when the stack goes', () => {
      const bucket = resourceOf(s.template, 'AWS::S3::Bucket', s.ids.bucket);
      expect(bucket.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
      });
      // Retain, even when the first create rolls back.
      expect(bucket.DeletionPolicy).toBe('Retain');
      expect(bucket.UpdateReplacePolicy).toBe('Retain');
      // No lifecycle rule that could expire or remove a sealed object.
      expect(bucket.Properties.LifecycleConfiguration).toBeUndefined();
    });

    it('has a policy that requires TLS and If-None-Match, lets only the sealer write, and allows nothing', () => {
      const policies = Object.values(resources(s.template, 'AWS::S3::BucketPolicy'));
      expect(policies).toHaveLength(1);
      expect(policies[0]?.Properties.Bucket).toEqual({ Ref: s.ids.bucket });
      const statements = (policies[0]!.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      // Deny only: the bucket policy grants no one anything (the sealer's grants are its role's).
      expect(statements.map((st) => st.Effect)).toEqual(['Deny', 'Deny', 'Deny']);
      const everyone = { AWS: '*' };
      expect(statements).toContainEqual({
        Effect: 'Deny',
        Principal: everyone,
        Action: 's3:*',
        Resource: [getAtt(s.ids.bucket), objectsOf(s.ids.bucket)],
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      });
      // A put without If-None-Match (the condition key is then absent) is refused: a put can only
      // create an object, never overwrite one.
      expect(statements).toContainEqual({
        Sid: 'RequireIfNoneMatch',
        Effect: 'Deny',
        Principal: everyone,
        Action: 's3:PutObject',
        Resource: objectsOf(s.ids.bucket),
        Condition: { Null: { 's3:if-none-match': 'true' } },
      });
      expect([...AUDIT_BUCKET_GUARDED_WRITES].sort()).toEqual([
        's3:DeleteObject*',
        's3:PutObject',
        's3:PutObjectRetention',
      ]);
      expect(statements).toContainEqual({
        Sid: 'OnlyTheSealerWrites',
        Effect: 'Deny',
        Principal: everyone,
        Action: ['s3:DeleteObject*', 's3:PutObject', 's3:PutObjectRetention'],
        Resource: objectsOf(s.ids.bucket),
        Condition: { StringNotEquals: { 'aws:PrincipalArn': getAtt(s.ids.sealerRole) } },
      });
      // Deleting a version and adding a delete marker are both covered.
      const guarded = listOf(statements.find((st) => st.Sid === 'OnlyTheSealerWrites')?.Action);
      for (const write of [
        's3:DeleteObject',
        's3:DeleteObjectVersion',
        's3:PutObject',
        's3:PutObjectRetention',
      ]) {
        expect(
          guarded.some((pattern) => covers(pattern, write)),
          write,
        ).toBe(true);
      }
    });
  });

  describe('the seal key', () => {
    it('keeps its logical id (a new one would be a new key: a new public key to pin)', () => {
      expect(s.ids.key).toBe('AuditSealKey3F4D2F8F');
      s.template.resourceCountIs('AWS::KMS::Key', 1);
    });

    it('is an asymmetric signing key (ECC_NIST_P256, SIGN_VERIFY), not rotated, kept when the stack goes', () => {
      const key = resourceOf(s.template, 'AWS::KMS::Key', s.ids.key);
      expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
      expect(key.Properties.EnableKeyRotation).toBeUndefined();
      expect(key.DeletionPolicy).toBe('Retain');
      expect(key.UpdateReplacePolicy).toBe('Retain');
    });

    it('lets the account administer it but not sign, and the sealer role alone sign and read its public key', () => {
      const statements = (
        resourceOf(s.template, 'AWS::KMS::Key', s.ids.key).Properties.KeyPolicy as { Statement: Statement[] }
      ).Statement;
      expect(statements).toHaveLength(2);
      const root = {
        AWS: {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']],
        },
      };
      expect(statements[0]).toEqual({
        Sid: 'AccountAdministersTheKey',
        Effect: 'Allow',
        Principal: root,
        Action: [...AUDIT_SEAL_KEY_ADMIN_ACTIONS].sort(),
        Resource: '*',
      });
      expect(statements[1]).toEqual({
        Sid: 'OnlyTheSealerSigns',
        Effect: 'Allow',
        Principal: { AWS: getAtt(s.ids.sealerRole) },
        Action: [...AUDIT_SEALER_KEY_ACTIONS].sort(),
        Resource: '*',
      });
      // No statement but the sealer's covers kms:Sign, whatever its wildcard: not kms:*, not kms:S*.
      for (const statement of statements) {
        const signs = listOf(statement.Action).some((pattern) => covers(pattern, 'kms:Sign'));
        expect(signs, statement.Sid).toBe(statement.Sid === 'OnlyTheSealerSigns');
        expect(listOf(statement.Action), statement.Sid).not.toContain('kms:*');
        // Nor kms:CreateGrant, which would hand kms:Sign to anyone without a change of this policy.
        const grants = listOf(statement.Action).some((pattern) => covers(pattern, 'kms:CreateGrant'));
        expect(grants, statement.Sid).toBe(false);
      }
      expect(statements.every((st) => st.Effect === 'Allow' && st.Condition === undefined)).toBe(true);
    });

    it('is named in no IAM policy: the key policy alone grants the sealer (no dependency cycle)', () => {
      for (const [id, policy] of Object.entries(resources(s.template, 'AWS::IAM::Policy'))) {
        expect(JSON.stringify(policy.Properties.PolicyDocument), id).not.toContain(s.ids.key);
      }
    });
  });

  describe('the sealer', () => {
    it('is a function of its own: reserved concurrency 1, 512 MB, 300 s, no extension, outside any VPC', () => {
      const fn = resourceOf(s.template, 'AWS::Lambda::Function', s.ids.sealer).Properties;
      expect(fn).toMatchObject({
        ReservedConcurrentExecutions: 1,
        MemorySize: 512,
        Timeout: 300,
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: { Ref: idOf(s.stack, s.sealing.sealer.logGroup) } },
      });
      expect(fn.Layers).toBeUndefined();
      expect(fn.VpcConfig).toBeUndefined();
      // A role of its own, no route function's.
      for (const name of FUNCTION_NAMES) {
        expect(s.sealing.sealer.role).not.toBe(s.stack.functions[name].role);
      }
      expect(AUDIT_SEALER_ENTRY).toBe('lambdas/handlers/audit-sealer.ts');
    });

    it('is reached by no route', () => {
      const integrations = Object.values(resources(s.template, 'AWS::ApiGatewayV2::Integration'));
      expect(integrations.length).toBeGreaterThan(0);
      for (const integration of integrations) {
        expect(JSON.stringify(integration.Properties)).not.toContain(s.ids.sealer);
      }
      const invokers = Object.values(resources(s.template, 'AWS::Lambda::Permission'))
        .filter((permission) => JSON.stringify(permission.Properties.FunctionName).includes(s.ids.sealer))
        .map((permission) => permission.Properties.Principal);
      expect(invokers).toEqual(['events.amazonaws.com', 'events.amazonaws.com']);
    });

    it('gets the settings it reads: the audit, its table, when a pending record may be completed, the bucket and the key', () => {
      const env = (
        resourceOf(s.template, 'AWS::Lambda::Function', s.ids.sealer).Properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
      expect(env).toMatchObject({
        LOG_LEVEL: 'INFO',
        AUDIT: 'on',
        AUDIT_TABLE: { Ref: s.ids.auditTable },
        AUDIT_RETENTION_DAYS: '400',
        // The writing functions' timeout (28 s) and the margin, as aux's.
        AUDIT_PENDING_AFTER: '58',
        AUDIT_SEALING: 'compliance',
        AUDIT_SEAL_MINUTES: '5',
        AUDIT_BUCKET: { Ref: s.ids.bucket },
        AUDIT_SEAL_KEY_ID: getAtt(s.ids.key),
      });
      // The handler's configuration loads from exactly this environment (names and ARNs as Lambda
      // gets them) and builds its parts: a setting the stack forgot would fail here.
      const given = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [
          name,
          typeof value === 'string'
            ? value
            : name === 'AUDIT_SEAL_KEY_ID'
              ? 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab'
              : 'erp-proxy-audit-1',
        ]),
      );
      const config = loadConfig({
        ...given,
        AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-AuditSealer',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      });
      expect(() => awsSealerParts(config)).not.toThrow();
      expect(sealerSettings(config, true)).toEqual({
        minutes: 5,
        pendingAfterMs: 58_000,
        auditOn: true,
        retentionDays: 400,
        lockDays: 400,
      });
    });

    it('may read and update the audit table itself (never an index), write and read its bucket, and nothing else', () => {
      expect([...AUDIT_SEALER_OPERATIONS].sort()).toEqual(['GetItem', 'Query', 'UpdateItem']);
      expect(roleOfFunction(s.template, s.ids.sealer)).toBe(s.ids.sealerRole);
      const grants = roleStatements(s.template, s.ids.sealerRole)
        .flatMap((st) =>
          listOf(st.Action).flatMap((action) =>
            listOf(st.Resource).map((resource) => {
              expect(st.Effect).toBe('Allow');
              return `${action} ${JSON.stringify(resource)}`;
            }),
          ),
        )
        .sort();
      const logs = JSON.stringify(getAtt(idOf(s.stack, s.sealing.sealer.logGroup)));
      const table = JSON.stringify(getAtt(s.ids.auditTable));
      const objects = JSON.stringify(objectsOf(s.ids.bucket));
      const bucket = JSON.stringify(getAtt(s.ids.bucket));
      expect(grants).toEqual(
        [
          `logs:CreateLogStream ${logs}`,
          `logs:PutLogEvents ${logs}`,
          ...['GetItem', 'Query', 'UpdateItem'].map((op) => `dynamodb:${op} ${table}`),
          ...AUDIT_SEALER_OBJECT_ACTIONS.map((action) => `${action} ${objects}`),
          ...AUDIT_SEALER_BUCKET_ACTIONS.map((action) => `${action} ${bucket}`),
        ].sort(),
      );
      expect([...AUDIT_SEALER_OBJECT_ACTIONS].sort()).toEqual([
        's3:GetObject',
        's3:GetObjectRetention',
        's3:GetObjectVersion',
        's3:PutObject',
        's3:PutObjectRetention',
      ]);
      expect([...AUDIT_SEALER_BUCKET_ACTIONS].sort()).toEqual(['s3:ListBucket', 's3:ListBucketVersions']);
      // Never the actor index: its reads can miss a record just written.
      expect(grants.join('\n')).not.toContain(`/index/${AUDIT_TABLE.actorIndex}`);
      // No delete, no governance bypass, no legal hold, no bucket configuration.
      expect(grants.join('\n')).not.toMatch(/Delete|Bypass|LegalHold|PutBucket|PutObjectAcl/);
    });

    it('is not retried by Lambda: the next schedule seals what a failed run left', () => {
      const configs = Object.values(resources(s.template, 'AWS::Lambda::EventInvokeConfig')).filter(
        (config) => JSON.stringify(config.Properties.FunctionName) === JSON.stringify({ Ref: s.ids.sealer }),
      );
      expect(configs.map((config) => config.Properties)).toEqual([
        {
          FunctionName: { Ref: s.ids.sealer },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: 0,
          MaximumEventAgeInSeconds: 3600,
        },
      ]);
    });

    it('builds with the AWS SDK in its own bundle (no @aws-sdk import left to the runtime, no built-in shims)', async () => {
      const options = esbuildOptions(`${ROOT}/${AUDIT_SEALER_ENTRY}`, 'index.mjs', 'bundled');
      expect(options.external).not.toContain('@aws-sdk/*');
      expect(options.alias).toBeUndefined();
      const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-audit-sealer-'));
      try {
        await build({ ...options, outfile: join(dir, 'index.mjs'), logLevel: 'silent' });
        const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
        expect(bundle).not.toMatch(/from\s*["']@aws-sdk\//);
        expect(bundle).not.toMatch(/import\(\s*["']@aws-sdk\//);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

  describe('the schedules', () => {
    const rulesToSealer = () =>
      Object.entries(resources(s.template, 'AWS::Events::Rule')).filter(([, rule]) =>
        JSON.stringify(rule.Properties.Targets).includes(`"${s.ids.sealer}"`),
      );

    it('seal every auditSealMinutes (5) and verify once a day, each sending its exact event to the sealer', () => {
      const rules = rulesToSealer();
      expect(rules.map(([id]) => id).sort()).toEqual(
        [idOf(s.stack, s.sealing.sealSchedule), idOf(s.stack, s.sealing.verifySchedule)].sort(),
      );
      const byId = Object.fromEntries(rules);
      const seal = byId[idOf(s.stack, s.sealing.sealSchedule)]!.Properties;
      const verify = byId[idOf(s.stack, s.sealing.verifySchedule)]!.Properties;
      expect(seal).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
      expect(verify).toMatchObject({ ScheduleExpression: 'rate(1 day)', State: 'ENABLED' });
      expect(AUDIT_VERIFY_HOURS).toBe(24);
      for (const [rule, event, job, maxAge] of [
        [seal, AUDIT_SEAL_EVENT, 'audit-seal', 300],
        [verify, AUDIT_VERIFY_EVENT, 'audit-verify', 3600],
      ] as const) {
        expect(rule.EventPattern).toBeUndefined();
        const targets = rule.Targets as { Arn: unknown; Input: string; RetryPolicy: unknown }[];
        expect(targets).toHaveLength(1);
        expect(targets[0]?.Arn).toEqual(getAtt(s.ids.sealer));
        expect(JSON.parse(targets[0]!.Input)).toEqual(event);
        expect(auditJobOf(JSON.parse(targets[0]!.Input))).toBe(job);
        expect(targets[0]?.RetryPolicy).toEqual({
          MaximumRetryAttempts: 2,
          MaximumEventAgeInSeconds: maxAge,
        });
      }
    });

    it('follow auditSealMinutes, and refuse minutes that do not divide an hour', () => {
      const fifteen = synth({ auditSealMinutes: 15 });
      expect(
        resourceOf(fifteen.template, 'AWS::Events::Rule', idOf(fifteen.stack, fifteen.sealing.sealSchedule))
          .Properties.ScheduleExpression,
      ).toBe('rate(15 minutes)');
      expect(() => synth({ auditSealMinutes: 7 })).toThrow(/auditSealMinutes/);
    });
  });

  describe('monitoring', () => {
    it("alarms on the sealer's errors like on every function's", () => {
      expect(alarmNamed(s.template, 'ErpProxy-AuditSealerErrors')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: s.ids.sealer } }],
        Statistic: 'Sum',
        Period: 300,
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: s.ids.topic }],
        OKActions: [{ Ref: s.ids.topic }],
      });
    });

    it('alarms when sealing falls 3 windows behind, or stops (missing data breaches)', () => {
      for (const name of [
        MetricName.AuditSealLag,
        MetricName.AuditWindowsSealed,
        MetricName.AuditVerifyFailures,
      ]) {
        expect(METRIC_SPECS.find((metric) => metric.name === name)?.dimensions, name).toEqual([]);
      }
      expect(AUDIT_SEAL_LAG_WINDOWS).toBe(3);
      const alarm = alarmNamed(s.template, 'ErpProxy-AuditSealLagging');
      expect(alarm).toMatchObject({
        Namespace: 'ErpProxy',
        MetricName: 'AuditSealLag',
        Dimensions: [{ Name: Dimension.Service, Value: 'erp-proxy' }],
        Statistic: 'Maximum',
        Period: 300,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        // 3 windows of 5 minutes, and the 58 s a record may stay pending, in whole minutes.
        Threshold: 3 * 5 + 1,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'breaching',
        AlarmActions: [{ Ref: s.ids.topic }],
        OKActions: [{ Ref: s.ids.topic }],
      });
      expect(String(alarm.AlarmDescription)).toMatch(/missing data/);
      // Its period and threshold follow the windows.
      const fifteen = synth({ auditSealMinutes: 15 });
      expect(alarmNamed(fifteen.template, 'ErpProxy-AuditSealLagging')).toMatchObject({
        Period: 900,
        Threshold: 3 * 15 + 1,
      });
    });

    it("alarms on a failed daily verification: any failure within the day's hours", () => {
      expect(alarmNamed(s.template, 'ErpProxy-AuditVerifyFailures')).toMatchObject({
        Namespace: 'ErpProxy',
        MetricName: 'AuditVerifyFailures',
        Dimensions: [{ Name: Dimension.Service, Value: 'erp-proxy' }],
        Statistic: 'Sum',
        Period: 3600,
        EvaluationPeriods: 24,
        DatapointsToAlarm: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: s.ids.topic }],
        OKActions: [{ Ref: s.ids.topic }],
      });
    });

    it('shows the windows sealed, the lag and the verification failures on the dashboard', () => {
      const body = JSON.stringify(Object.values(resources(s.template, 'AWS::CloudWatch::Dashboard'))[0]);
      for (const metric of ['AuditWindowsSealed', 'AuditSealLag', 'AuditVerifyFailures']) {
        expect(body).toContain(`\\"${metric}\\"`);
      }
      expect(body).toContain('Audit seal lag (minutes)');
    });
  });

  describe('the request-serving functions', () => {
    it('may not write to the bucket, sign, or touch the bucket or the key at all', () => {
      const dangerous = ['s3:PutObject', 's3:PutObjectRetention', 's3:DeleteObject', 'kms:Sign'];
      for (const name of FUNCTION_NAMES) {
        const fnId = idOf(s.stack, s.stack.functions[name].function);
        const statements = roleStatements(s.template, roleOfFunction(s.template, fnId));
        expect(statements.length, name).toBeGreaterThan(0);
        for (const statement of statements) {
          for (const pattern of listOf(statement.Action)) {
            for (const action of dangerous)
              expect(covers(pattern, action), `${name}: ${pattern}`).toBe(false);
          }
          const text = JSON.stringify(statement);
          expect(text, name).not.toContain(s.ids.bucket);
          expect(text, name).not.toContain(s.ids.key);
        }
      }
    });

    it('leaves the sealer the only role of the stack whose policy names the bucket', () => {
      const naming = Object.entries(resources(s.template, 'AWS::IAM::Policy'))
        .filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes(s.ids.bucket))
        .map(([id]) => id);
      expect(naming).toEqual([s.ids.sealerPolicy]);
    });
  });

  it('has no dependency cycle: the key and bucket policies name the role, no role policy names the key', () => {
    const all = s.template.toJSON().Resources as Record<string, Resource>;
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (id: string, path: string[]): void => {
      if (state.get(id) === 'done' || !(id in all)) return;
      if (state.get(id) === 'visiting') throw new Error(`cycle: ${[...path, id].join(' -> ')}`);
      state.set(id, 'visiting');
      for (const next of referencesOf(all[id]!)) visit(next, [...path, id]);
      state.set(id, 'done');
    };
    expect(() => {
      for (const id of Object.keys(all)) visit(id, []);
    }).not.toThrow();
    // The key (its policy) depends on the sealer's role; the function depends on the key (its ARN).
    expect(referencesOf(all[s.ids.key]!).has(s.ids.sealerRole)).toBe(true);
    expect(referencesOf(all[s.ids.sealer]!).has(s.ids.key)).toBe(true);
  });

  it('outputs the bucket name and the key ARN', () => {
    s.template.hasOutput('AuditBucketName', { Value: { Ref: s.ids.bucket } });
    s.template.hasOutput('AuditSealKeyArn', { Value: getAtt(s.ids.key) });
    s.template.hasOutput('AuditSealerLogGroup', { Value: { Ref: idOf(s.stack, s.sealing.sealer.logGroup) } });
  });
});

describe('audit sealing from context', () => {
  it('takes governance mode and auditLockDays (the trial settings: 1 day)', () => {
    const s = synth({ auditSealing: 'governance', auditLockDays: 1 });
    expect(
      resourceOf(s.template, 'AWS::S3::Bucket', s.ids.bucket).Properties.ObjectLockConfiguration,
    ).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } },
    });
    const env = (
      resourceOf(s.template, 'AWS::Lambda::Function', s.ids.sealer).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(env).toMatchObject({ AUDIT_SEALING: 'governance', AUDIT_LOCK_DAYS: '1' });
  });

  it('locks for auditRetentionDays when auditLockDays is not set', () => {
    const s = synth({ auditRetentionDays: 30 });
    expect(
      resourceOf(s.template, 'AWS::S3::Bucket', s.ids.bucket).Properties.ObjectLockConfiguration,
    ).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 30 } },
    });
  });

  it('reserves nothing for the sealer without reservations (a new account can deploy it)', () => {
    const s = synth({ reserveConcurrency: false });
    expect(
      resourceOf(s.template, 'AWS::Lambda::Function', s.ids.sealer).Properties.ReservedConcurrentExecutions,
    ).toBeUndefined();
  });

  it('stops the synth on a mode it does not know, naming the key', () => {
    expect(() => synth({ auditSealing: 'legal-hold' })).toThrow(/auditSealing/);
  });
});

describe('audit sealing off', () => {
  let stack: ErpProxyStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack({ auditSealing: 'off' }));
  });
  afterAll(() => undefined);

  it('builds no bucket, no key, no sealer, no schedule of its own', () => {
    expect(stack.auditSealing).toBeUndefined();
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.resourceCountIs('AWS::S3::BucketPolicy', 0);
    template.resourceCountIs('AWS::KMS::Key', 0);
    // The five, the deploy's table check and its trigger provider.
    template.resourceCountIs('AWS::Lambda::Function', 5 + 2);
    // The license check and the brakes report only.
    expect(Object.keys(resources(template, 'AWS::Events::Rule')).sort()).toEqual(
      [idOf(stack, stack.licenseCheckSchedule), idOf(stack, stack.brakesAgeSchedule)].sort(),
    );
    for (const fn of Object.values(resources(template, 'AWS::Lambda::Function'))) {
      const variables = JSON.stringify(fn.Properties.Environment ?? {});
      // No bucket, key or seal window of its own (aux shows AUDIT_SEALING `off` and the minutes in /_/about).
      expect(variables).not.toMatch(/AUDIT_BUCKET|AUDIT_SEAL_KEY_ID|AUDIT_LOCK_DAYS/);
      expect(variables).not.toMatch(/"AUDIT_SEALING":"(compliance|governance)"/);
    }
  });

  it('has no sealing alarm and no sealing output', () => {
    const names = Object.values(resources(template, 'AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties.AlarmName,
    );
    expect(names.filter((name) => /AuditSeal|AuditVerify/.test(String(name)))).toEqual([]);
    const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);
    expect(outputs.filter((name) => /AuditBucket|AuditSeal/.test(name))).toEqual([]);
    const body = JSON.stringify(Object.values(resources(template, 'AWS::CloudWatch::Dashboard'))[0]);
    expect(body).not.toContain('AuditSealLag');
  });
});
