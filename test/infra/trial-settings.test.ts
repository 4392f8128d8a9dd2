/**
 * The trial settings file (environments/trial.json, docs/deploy-trial.md): a stack a new account
 * can hold (no reserved concurrency, so a Lambda quota of 10 is enough), alarms on the stack's
 * topic with no mail address subscribed, a sealed audit whose objects a trial can still remove
 * (governance mode, locked 1 day), and the idle cost table of docs/deploy-trial.md counted from
 * this template (bin/idle-cost.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { idleCostTable, type Template as TemplateJson, TRIAL_DOC, withTable } from '../../bin/idle-cost.ts';
import { ErpProxyStack } from '../../lib/erp-proxy-stack.ts';
import { settingsFilesIn, withSettingsFile } from '../../lib/settings-file.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function trialTemplate(): Template {
  const app = testApp();
  const config = parseStackConfig(
    withSettingsFile(
      (key) => (key === 'environment' ? 'trial' : app.node.tryGetContext(key)),
      settingsFilesIn(ROOT),
    ),
  );
  return Template.fromStack(new ErpProxyStack(app, config.stackName, { config }));
}

describe('environments/trial.json', () => {
  const template = trialTemplate();

  it('reserves no concurrency: a new account with a quota of 10 can deploy it', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    // The five, the deploy's table check and CDK's trigger provider that runs it, the audit sealer.
    expect(Object.keys(functions)).toHaveLength(5 + 2 + 1);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('is not production, has its own stack name, and creates its own secrets', () => {
    const text = JSON.parse(readFileSync(`${ROOT}/environments/trial.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    expect(text.production).toBeUndefined();
    expect(text.stackName).toBe('ErpProxyTrial');
    // The proxy keys, the license and the audit digest key.
    template.resourceCountIs('AWS::SecretsManager::Secret', 3);
  });

  it('seals the audit into a bucket a trial can empty: Object Lock in governance mode for 1 day', () => {
    const text = JSON.parse(readFileSync(`${ROOT}/environments/trial.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    expect(text).toMatchObject({ auditSealing: 'governance', auditLockDays: 1 });
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } },
      },
    });
    template.resourceCountIs('AWS::KMS::Key', 1);
  });

  it('alarms notify the stack topic, with no mail address subscribed', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });

  it("docs/deploy-trial.md's idle cost table is the one counted from this template (npm run docs:cost)", () => {
    const text = readFileSync(TRIAL_DOC, 'utf8');
    expect(text).toBe(withTable(text, idleCostTable(template.toJSON() as TemplateJson)));
  });
});
