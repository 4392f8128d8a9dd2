/**
 * @module secrets-extension
 * The AWS Parameters and Secrets Lambda Extension on a function: which layer (the pinned table of
 * lib/secrets-extension-layers.ts for the stack's region, or the operator's
 * `secretsExtensionLayerArn`) and its settings, which CDK writes into the function's environment.
 */
import { Aws, CfnMapping, Duration, Stack, Token } from 'aws-cdk-lib';
import {
  Architecture,
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsLogLevel,
  type ParamsAndSecretsOptions,
} from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { parseLayerVersionArn } from './layer-version-arn.ts';
import {
  type LayerArchitecture,
  SECRETS_EXTENSION_LAYERS,
  SECRETS_EXTENSION_LAYERS_SOURCE,
} from './secrets-extension-layers.ts';

/**
 * The extension's local HTTP port: the runtime reads its secrets there when
 * `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT` is set (lambdas/platform/config.ts), and through the
 * SDK otherwise. 2773 is the extension's own default.
 */
export const SECRETS_EXTENSION_HTTP_PORT = 2773;

/**
 * The extension's settings. CDK's `ParamsAndSecretsLayerVersion` (`fromVersionArn` exactly as
 * `fromVersion`) writes them into the function's environment
 * (`PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED=false`, `SECRETS_MANAGER_TIMEOUT_MILLIS=3000`,
 * `PARAMETERS_SECRETS_EXTENSION_LOG_LEVEL=warn`, `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT=2773`),
 * with the extension's defaults for its five other variables (cache size 1000, 3 connections,
 * TTLs 300 s, no Parameter Store timeout); test/infra/secrets-extension.test.ts pins all nine.
 *
 * Its own cache is off: the function caches for `SECRETS_MAX_AGE` already, and a second cache
 * would double how long a rotation takes to apply. Its call to Secrets Manager gives up after 3 s.
 */
export const SECRETS_EXTENSION_OPTIONS: ParamsAndSecretsOptions = Object.freeze({
  cacheEnabled: false,
  secretsManagerTimeout: Duration.seconds(3),
  logLevel: ParamsAndSecretsLogLevel.WARN,
  httpPort: SECRETS_EXTENSION_HTTP_PORT,
});

/** The synth cannot give the functions a layer of the extension; the message says why and what to do. */
export class SecretsExtensionLayerError extends Error {
  override name = 'SecretsExtensionLayerError';
}

/** Refused at synth: the stack's region is known and the table has no layer for it. */
export class SecretsExtensionRegionError extends SecretsExtensionLayerError {
  override name = 'SecretsExtensionRegionError';

  constructor(region: string, architecture: LayerArchitecture) {
    super(
      `No ${architecture} layer of the AWS Parameters and Secrets Lambda Extension is known for region ${region}: ` +
        `lib/secrets-extension-layers.ts lists AWS's table of ${SECRETS_EXTENSION_LAYERS_SOURCE.lastUpdated} ` +
        `(${SECRETS_EXTENSION_LAYERS_SOURCE.url}). If AWS now lists one, update the table ` +
        '(docs/deployment.md, "Updating the extension layer table") or give its ARN with -c secretsExtensionLayerArn=<ARN>.',
    );
  }
}

/** Refused at synth: the operator's layer is in another region than the stack (Lambda refuses it). */
export class SecretsExtensionLayerRegionMismatchError extends SecretsExtensionLayerError {
  override name = 'SecretsExtensionLayerRegionMismatchError';

  constructor(layerArn: string, stackRegion: string) {
    super(
      `secretsExtensionLayerArn ${layerArn} is a layer of region ${parseLayerVersionArn(layerArn)?.region}, ` +
        `but the stack deploys to ${stackRegion}: a function can only use layers of its own region.`,
    );
  }
}

/** The table's key for a Lambda architecture (`arm64`, `x86_64`). */
function layerArchitecture(architecture: Architecture): LayerArchitecture {
  return architecture.name === Architecture.X86_64.name ? 'x86_64' : 'arm64';
}

/** Construct id of the stack's mapping for one architecture (alphanumeric, as CloudFormation wants). */
function mappingId(architecture: LayerArchitecture): string {
  return architecture === 'arm64' ? 'SecretsExtensionLayerArm64' : 'SecretsExtensionLayerX8664';
}

/**
 * The layer version ARN of the extension for functions of `architecture` in `scope`'s stack.
 *
 * A stack whose region is known gets the table's ARN itself, and a region the table lacks stops
 * the synth ({@link SecretsExtensionRegionError}). An environment-agnostic stack (region a token)
 * gets `Fn::FindInMap` on `AWS::Region` into a mapping of the table's regions for that
 * architecture (one mapping per stack): a region outside it then fails at deployment, as
 * CloudFormation's "Unable to get mapping" for that mapping.
 *
 * @example
 * secretsExtensionLayerArn(fn, Architecture.ARM_64); // 'arn:aws:lambda:eu-west-1:…:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118' in eu-west-1
 */
export function secretsExtensionLayerArn(scope: IConstruct, architecture: Architecture): string {
  const stack = Stack.of(scope);
  const arch = layerArchitecture(architecture);
  if (!Token.isUnresolved(stack.region)) {
    const arn = SECRETS_EXTENSION_LAYERS[stack.region]?.[arch];
    if (arn === undefined) throw new SecretsExtensionRegionError(stack.region, arch);
    return arn;
  }
  const id = mappingId(arch);
  const existing = stack.node.tryFindChild(id);
  const mapping =
    existing instanceof CfnMapping
      ? existing
      : new CfnMapping(stack, id, {
          mapping: Object.fromEntries(
            Object.entries(SECRETS_EXTENSION_LAYERS).flatMap(([region, arns]) => {
              const arn = arns[arch];
              return arn === undefined ? [] : [[region, { layerArn: arn }]];
            }),
          ),
        });
  return mapping.findInMap(Aws.REGION, 'layerArn');
}

/**
 * The extension for a function: the operator's layer when given (`secretsExtensionLayerArn`),
 * otherwise {@link secretsExtensionLayerArn}'s, with {@link SECRETS_EXTENSION_OPTIONS}.
 */
export function secretsExtension(
  scope: IConstruct,
  architecture: Architecture,
  layerArnOverride?: string,
): ParamsAndSecretsLayerVersion {
  const stackRegion = Stack.of(scope).region;
  if (layerArnOverride !== undefined && !Token.isUnresolved(stackRegion)) {
    if (parseLayerVersionArn(layerArnOverride)?.region !== stackRegion) {
      throw new SecretsExtensionLayerRegionMismatchError(layerArnOverride, stackRegion);
    }
  }
  const arn = layerArnOverride ?? secretsExtensionLayerArn(scope, architecture);
  return ParamsAndSecretsLayerVersion.fromVersionArn(arn, SECRETS_EXTENSION_OPTIONS);
}
