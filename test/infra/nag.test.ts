/**
 * cdk-nag 3 (AwsSolutions) over the stack, as `npm run synth` runs it: the synth must not throw
 * (an unacknowledged finding throws), and the acknowledged rules are exactly the ones reviewed.
 */
import type { App, CfnElement } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { ErpProxyStack } from '../../lib/erp-proxy-stack.ts';
import { acknowledgedRuleIds, addNagChecks } from '../../lib/nag.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';
import { EXAMPLE_KEYS_SECRET_ARN, EXAMPLE_LICENSE_SECRET_ARN } from '../support/test-secrets.ts';

/** The logical id of the sealed windows' bucket, as the IAM5 finding names it. */
function sealBucketId(stack: ErpProxyStack): string {
  const bucket = stack.auditSealing?.bucket;
  if (!bucket) throw new Error('auditSealing is off');
  return stack.getLogicalId(bucket.node.defaultChild as CfnElement);
}

function nagApp(context: Record<string, unknown> = {}): { app: App; stack: ErpProxyStack } {
  const app = testApp(context);
  addNagChecks(app);
  const stack = new ErpProxyStack(app, 'ErpProxy', {
    config: parseStackConfig((key) => app.node.tryGetContext(key)),
  });
  return { app, stack };
}

/** Acknowledgment metadata entries (id → reason) under a scope, one per acknowledge() call. */
function acknowledgments(app: App): { id: string; reason: string; path: string }[] {
  return app.node.findAll().flatMap((node) =>
    node.node.metadata
      .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          id: id.replace(/^annotation::/i, ''),
          reason,
          path: node.node.path,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutions, default context', () => {
  const { app, stack } = nagApp();

  it('synthesizes with no unacknowledged finding', () => {
    expect(() => app.synth()).not.toThrow();
  });

  it('acknowledges exactly the reviewed rules', () => {
    expect(acknowledgedRuleIds(app)).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-DDB3',
      'AwsSolutions-IAM5[Resource::*]',
      // The audit sealer's objects of its own bucket, and that bucket's access logs (issue 57). The
      // seal key needs none: AwsSolutions-KMS5 (rotation) checks symmetric keys only.
      `AwsSolutions-IAM5[Resource::<${sealBucketId(stack)}.Arn>/*]`,
      'AwsSolutions-S1',
      'AwsSolutions-SMG4',
      'AwsSolutions-SNS2',
    ]);
  });

  it('acknowledges one construct at a time, each with a reason', () => {
    const acks = acknowledgments(app);
    // 9 routes, GET /_/audit, the 3 of /_/brakes, the 3 of /mcp (POST, and GET and DELETE answered
    // 405) and the 2 of its OAuth protected resource metadata, 3 secrets, 1 GetMetricData
    // statement, the alarm topic.
    const routes = acks.filter((a) => a.id === 'AwsSolutions-APIG4');
    expect(routes).toHaveLength(18);
    expect(
      routes.filter((a) =>
        /^GET \/\.well-known\/oauth-protected-resource.*: Public by design/.test(a.reason),
      ),
    ).toHaveLength(2);
    expect(routes.filter((a) => /^(POST|GET|DELETE) \/mcp: /.test(a.reason))).toHaveLength(3);
    expect(
      acks
        .filter((a) => a.id === 'AwsSolutions-SMG4')
        .map((a) => a.path)
        .sort(),
    ).toEqual(['ErpProxy/AuditDigestSecret', 'ErpProxy/LicenseSecret', 'ErpProxy/ProxyKeysSecret']);
    expect(acks.filter((a) => a.id === 'AwsSolutions-IAM5[Resource::*]').map((a) => a.path)).toEqual([
      'ErpProxy/Aux/Role/DefaultPolicy',
    ]);
    expect(acks.filter((a) => a.id === 'AwsSolutions-SNS2').map((a) => a.path)).toEqual([
      'ErpProxy/AlarmTopic',
    ]);
    expect(acks.filter((a) => a.id === 'AwsSolutions-S1').map((a) => a.path)).toEqual([
      'ErpProxy/AuditSealBucket',
    ]);
    expect(acks.filter((a) => a.id.startsWith('AwsSolutions-IAM5[Resource::<')).map((a) => a.path)).toEqual([
      'ErpProxy/AuditSealer/Role/DefaultPolicy',
    ]);
    // Only the state table: the audit table has point-in-time recovery on.
    expect(acks.filter((a) => a.id === 'AwsSolutions-DDB3').map((a) => a.path)).toEqual([
      'ErpProxy/StateTable',
    ]);
    expect(acks.every((a) => a.path !== 'ErpProxy' && a.path !== '')).toBe(true);
    for (const ack of acks) expect(ack.reason.length, ack.id).toBeGreaterThan(40);
  });
});

describe('cdk-nag AwsSolutions, VPC, imported secrets, custom domain and alarm e-mail', () => {
  const { app, stack } = nagApp({
    proxyKeysSecretArn: EXAMPLE_KEYS_SECRET_ARN,
    licenseSecretArn: EXAMPLE_LICENSE_SECRET_ARN,
    secretsKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/0b7a3c2e-1111-2222-3333-444455556666',
    vpcId: 'vpc-0123456789abcdef0',
    vpcSubnetIds: 'subnet-0123456789abcdef0,subnet-0fedcba9876543210',
    domainName: 'erp-proxy.example.com',
    certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/11111111-2222-3333-4444-555555555555',
    alarmEmail: 'ops@example.com',
  });

  it('synthesizes with no unacknowledged finding', () => {
    expect(() => app.synth()).not.toThrow();
  });

  it('acknowledges exactly the reviewed rules', () => {
    expect(acknowledgedRuleIds(app)).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-DDB3',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      'AwsSolutions-IAM5[Resource::*]',
      `AwsSolutions-IAM5[Resource::<${sealBucketId(stack)}.Arn>/*]`,
      'AwsSolutions-S1',
      // The audit digest key: the stack creates it even when the other secrets are imported.
      'AwsSolutions-SMG4',
      'AwsSolutions-SNS2',
    ]);
  });
});

describe('cdk-nag AwsSolutions, audit sealing off', () => {
  const { app } = nagApp({ auditSealing: 'off' });

  it('synthesizes with no unacknowledged finding, and acknowledges nothing for a sealing it does not build', () => {
    expect(() => app.synth()).not.toThrow();
    expect(acknowledgedRuleIds(app)).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-DDB3',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-SMG4',
      'AwsSolutions-SNS2',
    ]);
  });
});

describe('cdk-nag is really on', () => {
  it('fails the synth on a new, unacknowledged finding', () => {
    const { app, stack } = nagApp();
    new Secret(stack, 'UnreviewedSecret');
    expect(() => app.synth()).toThrow(/AwsSolutions-SMG4/);
  });
});
