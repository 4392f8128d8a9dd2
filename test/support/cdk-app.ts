/**
 * The CDK context of cdk.json (feature flags included) for tests: `new App()` does not read
 * cdk.json, only the CLI does, so a test App without it would synthesize another template than
 * `npm run synth` and `cdk deploy`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { afterAll } from 'vitest';

const CDK_JSON = fileURLToPath(new URL('../../cdk.json', import.meta.url));

/** The `context` object of cdk.json. */
export function cdkJsonContext(): Record<string, unknown> {
  const parsed = JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context?: Record<string, unknown> };
  return { ...parsed.context };
}

/** The output folders of this test file's Apps, removed after its tests. */
const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * An App as the CLI would build it from cdk.json, plus `context`, with bundling skipped and the
 * CloudFormation validation off (each would cost seconds per synth). It synthesizes into a
 * temporary folder of its own, removed after the test file (without `outdir`, CDK makes a
 * `cdk.outXXXXXX` in the temporary directory per App and leaves it there).
 */
export function testApp(context: Record<string, unknown> = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), 'erp-proxy-cdk-app-'));
  outdirs.push(outdir);
  return new App({
    outdir,
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
    builtinCloudFormationValidation: false,
  });
}
