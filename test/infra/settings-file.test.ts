/**
 * Settings files (`-c environment=<name>` reads `environments/<name>.json`): production settings
 * live in the repository, a production synth takes nothing from the command line, refuses to run
 * without license signature checks unless told, and never creates its secrets.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErpProxyStack } from '../../lib/erp-proxy-stack.ts';
import {
  ENVIRONMENTS_DIR,
  type SettingsFileLoader,
  settingsFileNames,
  settingsFilesIn,
  withSettingsFile,
} from '../../lib/settings-file.ts';
import { type ContextReader, parseStackConfig, StackConfigError } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';
import { EXAMPLE_KEYS_SECRET_ARN, EXAMPLE_LICENSE_SECRET_ARN } from '../support/test-secrets.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PUBLIC_KEY = 'MCowBQYDK2VwAyEAc+y+QGkkayUI0b4Oe1Z82/om+eD0cbnQ+8HXovD6xag=';

const context =
  (values: Record<string, unknown>): ContextReader =>
  (key) =>
    values[key];

const files =
  (byName: Record<string, unknown>): SettingsFileLoader =>
  (name) =>
    name in byName ? JSON.stringify(byName[name]) : undefined;

const PRODUCTION = {
  production: true,
  licensePublicKey: PUBLIC_KEY,
  proxyKeysSecretArn: EXAMPLE_KEYS_SECRET_ARN,
  licenseSecretArn: EXAMPLE_LICENSE_SECRET_ARN,
  allowedTargets: ['erp.example.com'],
};

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof StackConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a StackConfigError');
}

function configFrom(values: Record<string, unknown>, byName: Record<string, unknown>) {
  return parseStackConfig(withSettingsFile(context(values), files(byName)));
}

describe('settings files', () => {
  it('without environment, reads the context as it is', () => {
    const config = configFrom({ maxTimeout: 20 }, {});
    expect(config.settings.maxTimeoutSeconds).toBe(20);
    expect(config.production).toBe(false);
  });

  it('reads the production settings from the file alone', () => {
    const config = configFrom({ environment: 'prod' }, { prod: PRODUCTION });
    expect(config.production).toBe(true);
    expect(config.settings.allowedTargets).toEqual(['erp.example.com']);
    expect(config.settings.licensePublicKey).toBe(PUBLIC_KEY);
    expect(config.proxyKeysSecretArn).toBe(EXAMPLE_KEYS_SECRET_ARN);
  });

  it('refuses, for a production file, any setting given on the command line or in cdk.json', () => {
    const problems = problemsOf(() =>
      configFrom(
        { environment: 'prod', allowedTargets: 'other.example.com', alarmEmail: 'a@b.example' },
        { prod: PRODUCTION },
      ),
    );
    expect(problems).toEqual([
      'allowedTargets: given on the command line or in cdk.json, but a production synth takes its settings only from environments/prod.json: put it there',
      'alarmEmail: given on the command line or in cdk.json, but a production synth takes its settings only from environments/prod.json: put it there',
    ]);
  });

  it('lets -c override a file that is not for production', () => {
    const config = configFrom(
      { environment: 'dev', maxTimeout: '12' },
      { dev: { maxTimeout: 20, defaultTimeout: 10 } },
    );
    expect(config.settings.maxTimeoutSeconds).toBe(12);
    expect(config.settings.defaultTimeoutSeconds).toBe(10);
  });

  it('names a missing file and the ones there are, an unknown key, and a bad value with its key', () => {
    expect(
      problemsOf(() => withSettingsFile(context({ environment: 'prdo' }), files({}), () => ['dev', 'prod'])),
    ).toEqual(['environment: there is no environments/prdo.json (there are: dev, prod)']);
    expect(
      problemsOf(() => configFrom({ environment: 'prod' }, { prod: { ...PRODUCTION, maxTimout: 20 } })),
    ).toEqual([
      'environments/prod.json: "maxTimout" is not a setting (docs/deployment.md, "Context parameters")',
    ]);
    expect(
      problemsOf(() => configFrom({ environment: 'prod' }, { prod: { ...PRODUCTION, v1Transport: 'xml' } })),
    ).toEqual(['v1Transport: expected one of auto, json2, jsonrpc, got "xml"']);
    expect(problemsOf(() => configFrom({ environment: '../etc' }, {}))[0]).toMatch(
      /^environment: expected a settings file name/,
    );
    expect(problemsOf(() => withSettingsFile(context({ environment: 'x' }), () => '[1]'))).toEqual([
      'environments/x.json: expected a JSON object of settings',
    ]);
  });
});

describe('a production synth', () => {
  it('refuses to run without licensePublicKey unless unsigned licenses are accepted explicitly', () => {
    const { licensePublicKey: _key, ...unsigned } = PRODUCTION;
    const problems = problemsOf(() => configFrom({ environment: 'prod' }, { prod: unsigned }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^production: licensePublicKey is not set, so any license document would be accepted/,
    );
    expect(problems[0]).toMatch(/acceptUnsignedLicenses: true/);
    const accepted = configFrom(
      { environment: 'prod' },
      { prod: { ...unsigned, acceptUnsignedLicenses: true } },
    );
    expect(accepted.settings.licensePublicKey).toBeUndefined();
    // Meaningless outside production: refused rather than silently ignored.
    expect(problemsOf(() => parseStackConfig(context({ acceptUnsignedLicenses: true })))).toEqual([
      'acceptUnsignedLicenses applies to a production synth only (production: true)',
    ]);
  });

  it('never creates its secrets: both ARNs are required', () => {
    const { proxyKeysSecretArn: _keys, licenseSecretArn: _license, ...created } = PRODUCTION;
    const problems = problemsOf(() => configFrom({ environment: 'prod' }, { prod: created }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^production: proxyKeysSecretArn and licenseSecretArn are not set\. A production stack never creates its secrets/,
    );
  });
});

describe('the settings files of this repository', () => {
  const names = settingsFileNames(join(ROOT, ENVIRONMENTS_DIR));

  it('has at least the production example', () => {
    expect(names).toContain('example-production');
  });

  it.each(names)('environments/%s.json synthesizes', (name) => {
    const app = testApp();
    const read = withSettingsFile(
      (key) => (key === 'environment' ? name : app.node.tryGetContext(key)),
      settingsFilesIn(ROOT),
    );
    const config = parseStackConfig(read);
    const stack = new ErpProxyStack(app, config.stackName, { config });
    expect(stack.stackName).toBe(config.stackName);
  });

  it("names each stack differently, so a deploy with one file can never update another's stack", () => {
    const stackNames = names.map(
      (name) =>
        parseStackConfig(withSettingsFile(context({ environment: name }), settingsFilesIn(ROOT))).stackName,
    );
    expect(new Set(stackNames).size).toBe(stackNames.length);
  });
});

describe('the CDK app (bin/erp-proxy.ts)', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'erp-proxy-cdk-out-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('stops a production synth given a setting on the command line, with the message and exit code 1', () => {
    let failure: { status: number | null; stderr: string } | undefined;
    try {
      execFileSync(process.execPath, ['--import', 'tsx', 'bin/erp-proxy.ts'], {
        cwd: ROOT,
        env: {
          ...process.env,
          CDK_OUTDIR: outdir,
          // What the CDK CLI passes for `-c environment=example-production -c allowedTargets=x.example.com`.
          CDK_CONTEXT_JSON: JSON.stringify({
            environment: 'example-production',
            allowedTargets: 'x.example.com',
            'aws:cdk:bundling-stacks': [],
          }),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      });
    } catch (error) {
      failure = error as { status: number | null; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toContain(
      'allowedTargets: given on the command line or in cdk.json, but a production synth takes its settings only from environments/example-production.json',
    );
    expect(failure?.stderr).not.toMatch(/\n\s+at /);
  });
});
