/**
 * The CDK context of cdk.json (feature flags included) for tests: `new App()` does not read
 * cdk.json, only the CLI does, so a test App without it would synthesize another template than
 * `npm run synth` and `cdk deploy`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';

const CDK_JSON = fileURLToPath(new URL('../../cdk.json', import.meta.url));

/** The `context` object of cdk.json. */
export function cdkJsonContext(): Record<string, unknown> {
  const parsed = JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context?: Record<string, unknown> };
  return { ...parsed.context };
}

/**
 * An App as the CLI would build it from cdk.json, plus `context`, with bundling skipped and the
 * CloudFormation validation off (each would cost seconds per synth).
 */
export function testApp(context: Record<string, unknown> = {}): App {
  return new App({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
    builtinCloudFormationValidation: false,
  });
}
