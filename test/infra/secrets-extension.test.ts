/**
 * The AWS Parameters and Secrets Lambda Extension on the functions: the pinned layer table
 * (well-formed; every region of it synthesizes with its own arm64 ARN), the mapping of an
 * environment-agnostic stack, regions without a layer, the operator's `secretsExtensionLayerArn`,
 * and the extension's environment on every function.
 */
import { fileURLToPath } from 'node:url';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lambdas/platform/names.ts';
import { HANDLER_ENTRIES } from '../../lambdas/platform/routes.ts';
import { ErpProxyStack } from '../../lib/erp-proxy-stack.ts';
import { isLayerVersionArn, parseLayerVersionArn } from '../../lib/layer-version-arn.ts';
import { ProxyFunction } from '../../lib/proxy-function.ts';
import {
  SecretsExtensionLayerRegionMismatchError,
  SecretsExtensionRegionError,
} from '../../lib/secrets-extension.ts';
import {
  LAYER_ARCHITECTURES,
  type LayerArchitecture,
  SECRETS_EXTENSION_LAYERS,
  SECRETS_EXTENSION_LAYERS_SOURCE,
} from '../../lib/secrets-extension-layers.ts';
import { parseStackConfig, StackConfigError } from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** The layer names AWS gives the extension, per architecture. */
const LAYER_NAMES: Readonly<Record<LayerArchitecture, string>> = {
  arm64: 'AWS-Parameters-and-Secrets-Lambda-Extension-Arm64',
  x86_64: 'AWS-Parameters-and-Secrets-Lambda-Extension',
};

/** Every (region, architecture, ARN) of the table. */
const TABLE_ENTRIES = Object.entries(SECRETS_EXTENSION_LAYERS).flatMap(([region, arns]) =>
  LAYER_ARCHITECTURES.flatMap((arch) => {
    const arn = arns[arch];
    return arn === undefined ? [] : [[region, arch, arn] as const];
  }),
);

/** The arm64 ARN of each region that has one: what the functions get. */
const ARM64_LAYERS: Readonly<Record<string, string>> = Object.fromEntries(
  TABLE_ENTRIES.filter(([, arch]) => arch === 'arm64').map(([region, , arn]) => [region, arn]),
);

/** An operator's own layer, in eu-west-1 (another account and name than AWS's). */
const OPERATOR_LAYER = 'arn:aws:lambda:eu-west-1:123456789012:layer:my-secrets-extension:7';

/** The partition of a region's ARNs. */
function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  if (region.startsWith('eusc-')) return 'aws-eusc';
  return 'aws';
}

interface FullStack {
  readonly template: Template;
  /** `Layers` and environment of each function. */
  readonly functions: readonly { readonly layers: unknown; readonly env: Record<string, unknown> }[];
}

const fullStacks = new Map<string, FullStack>();

/** The whole erp-proxy stack, environment-agnostic or in `region` (each one synthesized once). */
function fullStack(context: Record<string, unknown> = {}, region?: string): FullStack {
  const key = JSON.stringify([context, region]);
  const synthesized = fullStacks.get(key) ?? synthFullStack(context, region);
  fullStacks.set(key, synthesized);
  return synthesized;
}

function synthFullStack(context: Record<string, unknown>, region: string | undefined): FullStack {
  const app = testApp(context);
  const config = parseStackConfig((key) => app.node.tryGetContext(key));
  const stack = new ErpProxyStack(app, 'ErpProxy', { config, ...(region ? { env: { region } } : {}) });
  const template = Template.fromStack(stack);
  const resources = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
  const functions = FUNCTION_NAMES.map((name) => {
    const id = stack.getLogicalId(stack.functions[name].function.node.defaultChild as CfnElement);
    const props = resources[id]?.Properties ?? {};
    return {
      layers: props.Layers,
      env: (props.Environment as { Variables: Record<string, unknown> }).Variables,
    };
  });
  return { template, functions };
}

/** One function of the service in a stack of its own in `region` (the region sweep: fast). */
function functionStackIn(app: ReturnType<typeof testApp>, region: string): Stack {
  const stack = new Stack(app, `Function-${region}`, { env: { region } });
  new ProxyFunction(stack, 'Version', {
    description: 'the version function, alone',
    entry: `${PROJECT_ROOT}/${HANDLER_ENTRIES.version}`,
    projectRoot: PROJECT_ROOT,
    memoryMb: 256,
    timeoutSeconds: 28,
    environment: {},
    logRetention: RetentionDays.ONE_MONTH,
    reservedConcurrency: 1,
  });
  return stack;
}

describe('the layer table (lib/secrets-extension-layers.ts)', () => {
  it.each(TABLE_ENTRIES)('%s, %s: an ARN of that region, partition and architecture', (region, arch, arn) => {
    expect(parseLayerVersionArn(arn)).toMatchObject({
      partition: partitionOf(region),
      region,
      name: LAYER_NAMES[arch],
    });
  });

  it('takes both architectures of a region from the same AWS account', () => {
    for (const [region, arns] of Object.entries(SECRETS_EXTENSION_LAYERS)) {
      const accounts = new Set(Object.values(arns).map((arn) => parseLayerVersionArn(arn)?.account));
      expect(accounts.size, region).toBe(1);
    }
  });

  it('has an arm64 layer for every region CDK 1.0.103 had one for, and for the ones it refused', () => {
    const cdkRegions = RegionInfo.regions
      .filter((info) => info.paramsAndSecretsLambdaLayerArn('1.0.103', 'arm64') !== undefined)
      .map((info) => info.name);
    expect(cdkRegions.length).toBeGreaterThan(10);
    expect(Object.keys(ARM64_LAYERS)).toEqual(expect.arrayContaining(cdkRegions));
    expect(Object.keys(ARM64_LAYERS)).toEqual(
      expect.arrayContaining(['ap-northeast-3', 'eu-central-2', 'il-central-1', 'ca-west-1', 'mx-central-1']),
    );
  });

  it('agrees with CDK’s 1.0.103 table on the account and layer name of each region both have', () => {
    for (const info of RegionInfo.regions) {
      const cdkArn = info.paramsAndSecretsLambdaLayerArn('1.0.103', 'arm64');
      if (cdkArn === undefined) continue;
      // The same layer (partition, region, account, name); only the version differs.
      const ours = parseLayerVersionArn(ARM64_LAYERS[info.name] ?? '');
      expect({ ...ours, version: 0 }, info.name).toEqual({ ...parseLayerVersionArn(cdkArn), version: 0 });
    }
  });

  it('names the AWS page it comes from, the date AWS gives the table, and when it was read', () => {
    expect(SECRETS_EXTENSION_LAYERS_SOURCE.url).toMatch(
      /^https:\/\/docs\.aws\.amazon\.com\/systems-manager\/latest\/userguide\/ps-integration-lambda-extensions\.html#/,
    );
    expect(SECRETS_EXTENSION_LAYERS_SOURCE.lastUpdated).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(SECRETS_EXTENSION_LAYERS_SOURCE.readOn >= SECRETS_EXTENSION_LAYERS_SOURCE.lastUpdated).toBe(true);
  });
});

describe('layer version ARNs (lib/layer-version-arn.ts)', () => {
  it('accepts every ARN of the table, and layers of other partitions and names', () => {
    for (const [, , arn] of TABLE_ENTRIES) expect(isLayerVersionArn(arn), arn).toBe(true);
    expect(isLayerVersionArn(OPERATOR_LAYER)).toBe(true);
    expect(isLayerVersionArn('arn:aws-us-gov:lambda:us-gov-west-1:123456789012:layer:my_layer:1')).toBe(true);
  });

  it.each([
    ['a function', 'arn:aws:lambda:eu-west-1:123456789012:function:my-function'],
    ['a layer without its version', 'arn:aws:lambda:eu-west-1:123456789012:layer:my-layer'],
    ['version 0', 'arn:aws:lambda:eu-west-1:123456789012:layer:my-layer:0'],
    ['a short account', 'arn:aws:lambda:eu-west-1:12345:layer:my-layer:3'],
    ['no region', 'arn:aws:lambda::123456789012:layer:my-layer:3'],
    ['another service', 'arn:aws:ssm:eu-west-1:123456789012:layer:my-layer:3'],
    ['a name with a slash', 'arn:aws:lambda:eu-west-1:123456789012:layer:my/layer:3'],
    ['a region name', 'eu-west-1'],
  ])('refuses %s', (_what, text) => {
    expect(isLayerVersionArn(text)).toBe(false);
    expect(parseLayerVersionArn(text)).toBeUndefined();
  });
});

describe('a stack in each region of the table', () => {
  let templates: Map<string, Template>;
  beforeAll(() => {
    // One app, one synth for all of them: a stack per region with one function of the service
    // (the layer is chosen in ProxyFunction, the same for every function; the whole stack
    // in a region is checked below).
    const app = testApp();
    const stacks = Object.keys(ARM64_LAYERS).map((region) => [region, functionStackIn(app, region)] as const);
    templates = new Map(stacks.map(([region, stack]) => [region, Template.fromStack(stack)]));
  });

  it.each(Object.entries(ARM64_LAYERS))(
    'synthesizes in %s, with that region’s arm64 layer',
    (region, arn) => {
      const template = templates.get(region) as Template;
      template.resourcePropertiesCountIs(
        'AWS::Lambda::Function',
        { Architectures: ['arm64'], Layers: [arn] },
        1,
      );
      expect(template.toJSON().Mappings).toBeUndefined();
    },
  );

  it('refuses at synth a region the table has no arm64 layer for, naming it and the ways out', () => {
    for (const region of ['eusc-de-east-1', 'xx-nowhere-1']) {
      expect(() => functionStackIn(testApp(), region)).toThrow(SecretsExtensionRegionError);
      expect(() => functionStackIn(testApp(), region)).toThrow(
        new RegExp(`region ${region}: .*secrets-extension-layers\\.ts.*-c secretsExtensionLayerArn=`),
      );
    }
  });
});

describe('the whole stack', () => {
  it('environment-agnostic (the default): each function looks its layer up by AWS::Region in a mapping of the table', () => {
    const { template, functions } = fullStack();
    for (const fn of functions) {
      expect(fn.layers).toEqual([
        { 'Fn::FindInMap': ['SecretsExtensionLayerArm64', { Ref: 'AWS::Region' }, 'layerArn'] },
      ]);
    }
    // Exactly the table's arm64 regions, and no other mapping (CDK's 1.0.103 table is gone).
    expect(template.toJSON().Mappings).toEqual({
      SecretsExtensionLayerArm64: Object.fromEntries(
        Object.entries(ARM64_LAYERS).map(([region, arn]) => [region, { layerArn: arn }]),
      ),
    });
  });

  it.each(['il-central-1'])(
    'in %s (which CDK’s table refused): each function has that region’s layer itself',
    (region) => {
      const { template, functions } = fullStack({}, region);
      for (const fn of functions) expect(fn.layers).toEqual([ARM64_LAYERS[region]]);
      expect(template.toJSON().Mappings).toBeUndefined();
    },
  );
});

describe('secretsExtensionLayerArn (context)', () => {
  it('gives every function the operator’s layer instead of the table’s', () => {
    const { template, functions } = fullStack({ secretsExtensionLayerArn: OPERATOR_LAYER });
    expect(functions).toHaveLength(5);
    for (const fn of functions) expect(fn.layers).toEqual([OPERATOR_LAYER]);
    expect(template.toJSON().Mappings).toBeUndefined();
  });

  it('lets a stack deploy to a region the table lacks', () => {
    const layer = 'arn:aws-eusc:lambda:eusc-de-east-1:123456789012:layer:my-secrets-extension:3';
    const { functions } = fullStack({ secretsExtensionLayerArn: layer }, 'eusc-de-east-1');
    for (const fn of functions) expect(fn.layers).toEqual([layer]);
  });

  it('refuses at synth a layer of another region than the stack’s', () => {
    expect(() => fullStack({ secretsExtensionLayerArn: OPERATOR_LAYER }, 'eu-central-1')).toThrow(
      SecretsExtensionLayerRegionMismatchError,
    );
  });

  it.each([
    'arn:aws:lambda:eu-west-1:123456789012:function:my-function',
    'AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118',
    42,
  ])('stops the synth on %s, naming the key', (value) => {
    let problems: readonly string[] = [];
    try {
      parseStackConfig((key) => (key === 'secretsExtensionLayerArn' ? value : undefined));
    } catch (error) {
      if (!(error instanceof StackConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(
        /^secretsExtensionLayerArn: expected a Lambda layer version ARN, arn:aws:lambda:/,
      ),
    ]);
  });

  it('is read from the command line and from cdk.json alike, trimmed', () => {
    const config = parseStackConfig((key) =>
      key === 'secretsExtensionLayerArn' ? ` ${OPERATOR_LAYER} ` : undefined,
    );
    expect(config.secretsExtensionLayerArn).toBe(OPERATOR_LAYER);
    expect(parseStackConfig(() => undefined).secretsExtensionLayerArn).toBeUndefined();
  });
});

describe('the extension’s environment', () => {
  // What fromVersion(1.0.103) wrote before the table (the runtime reads the port; the rest is the
  // extension's): the same with the table's layer and with the operator's.
  const EXTENSION_ENV = {
    PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED: 'false',
    PARAMETERS_SECRETS_EXTENSION_CACHE_SIZE: '1000',
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
    PARAMETERS_SECRETS_EXTENSION_LOG_LEVEL: 'warn',
    PARAMETERS_SECRETS_EXTENSION_MAX_CONNECTIONS: '3',
    SECRETS_MANAGER_TIMEOUT_MILLIS: '3000',
    SECRETS_MANAGER_TTL: '300',
    SSM_PARAMETER_STORE_TIMEOUT_MILLIS: '0',
    SSM_PARAMETER_STORE_TTL: '300',
  };

  it.each([
    ['the table’s layer', {}],
    ['the operator’s layer', { secretsExtensionLayerArn: OPERATOR_LAYER }],
  ])('is the same on every function with %s: cache off, 3 s timeout, warn, port 2773', (_what, context) => {
    for (const fn of fullStack(context).functions) {
      const extensionEnv = Object.fromEntries(
        Object.entries(fn.env).filter(([key]) => /^(PARAMETERS_SECRETS_|SECRETS_MANAGER_|SSM_)/.test(key)),
      );
      expect(extensionEnv).toEqual(EXTENSION_ENV);
    }
  });
});
