/**
 * CDK feature flags: cdk.json sets every flag whose recommended value differs from how the
 * flag behaves when unset, so the templates do not change (and resources are not replaced)
 * the day someone sets them after the first deployment. The list comes from aws-cdk-lib
 * itself, so upgrading it with a new recommended flag fails this test until cdk.json has it
 * (`npx cdk flags` lists them; `cdk init --generate-only` in a scratch directory writes them).
 */
import { FeatureFlags } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { ErpProxyStack } from '../../lib/erp-proxy-stack.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { cdkJsonContext, testApp } from '../support/cdk-app.ts';

interface FlagInfo {
  readonly recommendedValue: unknown;
  readonly unconfiguredBehavesLike?: { readonly v2?: unknown };
}

/** Flags whose recommended value is not what an unset flag does in CDK v2. */
function recommendedFlags(): [string, unknown][] {
  const expired = new Set<string>(cxapi.CURRENT_VERSION_EXPIRED_FLAGS);
  return Object.entries(cxapi.FLAGS as Record<string, FlagInfo>)
    .filter(([name]) => !expired.has(name))
    .filter(
      ([, flag]) =>
        JSON.stringify(flag.recommendedValue) !== JSON.stringify(flag.unconfiguredBehavesLike?.v2),
    )
    .map(([name, flag]) => [name, flag.recommendedValue]);
}

describe('CDK feature flags', () => {
  it('sets every recommended flag in cdk.json, at its recommended value', () => {
    const context = cdkJsonContext();
    const flags = recommendedFlags();
    expect(flags.length).toBeGreaterThan(80);
    const wrong = flags
      .filter(([name, value]) => JSON.stringify(context[name]) !== JSON.stringify(value))
      .map(
        ([name, value]) =>
          `${name}: recommended ${JSON.stringify(value)}, cdk.json has ${JSON.stringify(context[name])}`,
      );
    expect(wrong).toEqual([]);
  });

  it('reach the stack the tests synthesize (test/support/cdk-app.ts reads cdk.json)', () => {
    const app = testApp();
    const stack = new ErpProxyStack(app, 'ErpProxy', {
      config: parseStackConfig((key) => app.node.tryGetContext(key)),
    });
    for (const [name, value] of recommendedFlags()) {
      if (typeof value !== 'boolean') continue;
      expect(FeatureFlags.of(stack).isEnabled(name), name).toBe(value);
    }
  });
});
