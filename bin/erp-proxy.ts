#!/usr/bin/env node
/**
 * @module erp-proxy (CDK app)
 * `npm run synth` / `npx cdk deploy`: builds the erp-proxy stack from CDK context (see
 * docs/deployment.md for the parameters) and runs cdk-nag's AwsSolutions checks on it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { SERVICE_NAME } from '../lambdas/platform/names.ts';
import { ErpProxyStack } from '../lib/erp-proxy-stack.ts';
import { addNagChecks } from '../lib/nag.ts';
import { SecretsExtensionLayerError } from '../lib/secrets-extension.ts';
import {
  ENVIRONMENTS_DIR,
  settingsFileNames,
  settingsFilesIn,
  withSettingsFile,
} from '../lib/settings-file.ts';
import { type ContextKey, parseStackConfig, StackConfigError } from '../lib/stack-config.ts';

/** The project root: it holds environments/ (the settings files). */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `git log` of the checked-out commit, or undefined outside a git checkout. */
function git(format: string): string | undefined {
  try {
    const out = execFileSync('git', ['log', '-1', `--format=${format}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

const app = new App();
addNagChecks(app);

let config: ReturnType<typeof parseStackConfig>;
try {
  // The catalogue's keys, from the settings file `-c environment=<name>` chooses, or the context.
  const context = withSettingsFile(
    (key: ContextKey): unknown => app.node.tryGetContext(key),
    settingsFilesIn(PROJECT_ROOT),
    () => settingsFileNames(join(PROJECT_ROOT, ENVIRONMENTS_DIR)),
  );
  config = parseStackConfig((key) => {
    const value = context(key);
    // The build identity defaults to the commit, so the same commit always synthesizes the same
    // template (no wall-clock time in it).
    if (value === undefined && key === 'buildCommit') return git('%h');
    if (value === undefined && key === 'buildTime') return git('%cI');
    return value;
  });
} catch (error) {
  if (error instanceof StackConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

try {
  new ErpProxyStack(app, config.stackName, {
    config,
    description: 'erp-proxy: JSON-RPC proxy for ERP instances (API Gateway HTTP API + Lambda)',
    // Account and region come from the CLI's profile; the stack itself is environment-agnostic.
    ...(process.env.CDK_DEFAULT_ACCOUNT && process.env.CDK_DEFAULT_REGION
      ? { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } }
      : {}),
    tags: { service: SERVICE_NAME },
  });
} catch (error) {
  // A region without an extension layer, or a layer of another region: the message says what to do.
  if (error instanceof SecretsExtensionLayerError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
