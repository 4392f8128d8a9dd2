/**
 * The settings catalogue (lambdas/platform/settings.ts, its texts in lib/setting-texts.ts, and
 * lib/stack-settings.ts): every runtime setting is deployable or says why not, each name is
 * declared once, the docs tables are the catalogue's, and the stack writes each function's
 * environment from it.
 */
import { readFileSync } from 'node:fs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { SETTING_READERS } from '../../lambdas/platform/names.ts';
import { RUNTIME_SETTINGS, type Setting } from '../../lambdas/platform/settings.ts';
import { functionEnvironment } from '../../lib/function-environment.ts';
import { RUNTIME_SETTING_TEXTS, type SettingText } from '../../lib/setting-texts.ts';
import { GENERATED_TABLES, renderContextTable, withTable } from '../../lib/settings-docs.ts';
import { CONTEXT_KEYS, parseStackConfig } from '../../lib/stack-config.ts';
import { LOG_RETENTION_DAYS, STACK_SETTINGS, type StackSetting } from '../../lib/stack-settings.ts';

const runtime = Object.entries(RUNTIME_SETTINGS as Readonly<Record<string, Setting>>);
const texts = RUNTIME_SETTING_TEXTS as Readonly<Record<string, SettingText>>;
const stack = Object.entries(STACK_SETTINGS as Readonly<Record<string, StackSetting>>);

describe('the settings catalogue', () => {
  it('has, for every runtime setting, a context key or the reason an operator cannot set it', () => {
    for (const [key, setting] of runtime) {
      expect(setting.env, key).toMatch(/^[A-Z][A-Z0-9_]*$/);
      const deployable = setting.context !== undefined;
      const notDeployable = setting.notDeployable;
      // Exactly one of the two, and a reason that says something.
      expect(deployable !== (notDeployable !== undefined), `${key}: deployable or not, with a reason`).toBe(
        true,
      );
      // The reason is the texts' (lib/setting-texts.ts): there exactly when it is not deployable.
      const why = texts[key]?.why;
      if (notDeployable !== undefined) expect(why?.length ?? 0, key).toBeGreaterThan(10);
      else expect(why, key).toBeUndefined();
      expect(texts[key]?.meaning.length ?? 0, key).toBeGreaterThan(10);
    }
  });

  it('has the texts of exactly the runtime settings, in their order', () => {
    expect(Object.keys(texts)).toEqual(Object.keys(RUNTIME_SETTINGS));
  });

  it('gives every stack setting a context key and what it sets', () => {
    for (const [key, setting] of stack) {
      expect(setting.context, key).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(setting.env, key).toBeUndefined();
      expect(setting.sets, key).toBeTruthy();
    }
  });

  it('declares each environment name and each context key once', () => {
    const envs = runtime.map(([, setting]) => setting.env);
    expect(envs.filter((env, at) => envs.indexOf(env) !== at)).toEqual([]);
    expect(CONTEXT_KEYS.filter((key, at) => CONTEXT_KEYS.indexOf(key) !== at)).toEqual([]);
    expect(CONTEXT_KEYS).toContain('v1Transport');
    expect(CONTEXT_KEYS).toContain('v2Transport');
  });

  it('shows in /_/about only settings the aux function reads, never a secret, target or database', () => {
    for (const [key, setting] of runtime.filter(([, s]) => s.about === true)) {
      expect(setting.readBy, key).toContain('aux');
      expect(setting.env, key).not.toMatch(/API_KEY|SECRET_ID|PUBLIC_KEY|TARGETS|DATABASES|FILE/);
    }
  });

  it('knows exactly the retention periods CloudWatch Logs (and the CDK) accept', () => {
    const cdk = Object.values(RetentionDays).filter((value): value is number => typeof value === 'number');
    expect([...LOG_RETENTION_DAYS].sort((a, b) => a - b)).toEqual([...new Set(cdk)].sort((a, b) => a - b));
  });

  it('writes every setting a function reads that the stack sets, for every function (the audit sealer too)', () => {
    const config = parseStackConfig(() => undefined);
    for (const fn of SETTING_READERS) {
      const env = functionEnvironment(fn, config.settings, {
        proxyKeysSecretId: 'keys-arn',
        licenseSecretId: 'license-arn',
        powertoolsLogLevel: config.logLevel,
        mcpOauthIdentitiesSecretId: 'identities-arn',
        stateTable: 'state-table',
        auditTable: 'audit-table',
        auditDigestSecretId: 'audit-digest-arn',
        auditPendingAfterSeconds: '58',
        auditBucket: 'audit-bucket',
        auditSealKeyId: 'audit-seal-key-arn',
      });
      for (const [key, setting] of runtime) {
        const written = setting.env !== undefined && setting.env in env;
        const reads = setting.readBy.includes(fn);
        if (!reads) expect(written, `${fn} does not read ${key}`).toBe(false);
        if (reads && setting.notDeployable?.by === 'stack') expect(written, `${fn} reads ${key}`).toBe(true);
        if (setting.notDeployable?.by === 'local' || setting.notDeployable?.by === 'lambda') {
          expect(written, `${key} is never deployed`).toBe(false);
        }
      }
    }
  });
});

describe('the configuration tables of docs/reference/configuration.md and docs/deployment.md', () => {
  it.each(GENERATED_TABLES.map((table) => [`${table.file} (${table.id})`, table] as const))(
    '%s is the catalogue rendered (npm run docs:settings)',
    (_name, table) => {
      const committed = readFileSync(new URL(`../../${table.file}`, import.meta.url), 'utf8');
      expect(withTable(committed, table)).toBe(committed);
    },
  );

  it('lists every context key once in docs/deployment.md', () => {
    const keys = [...renderContextTable().matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]);
    expect([...keys].sort()).toEqual([...CONTEXT_KEYS].sort());
  });
});
