/**
 * @module layer-version-arn
 * What a Lambda layer version ARN looks like, for the `secretsExtensionLayerArn` context key and
 * the extension's layer table. No CDK import: the context parser and the tests use it as is.
 */

/**
 * A Lambda layer version ARN: `arn:<partition>:lambda:<region>:<account>:layer:<name>:<version>`.
 * The partition is `aws` or `aws-…` (`aws-cn`, `aws-us-gov`, `aws-eusc`), the region like
 * `us-east-1` or `us-gov-west-1`, the name up to 140 letters, digits, `-` and `_` (Lambda's own
 * limit), the version a positive integer. Named groups: `partition`, `region`, `account`, `name`,
 * `version`.
 */
export const LAYER_VERSION_ARN =
  /^arn:(?<partition>aws(?:-[a-z]+)*):lambda:(?<region>[a-z]+(?:-[a-z]+)+-\d+):(?<account>\d{12}):layer:(?<name>[A-Za-z0-9_-]{1,140}):(?<version>[1-9]\d*)$/;

/** What a bad value is told it should be (the context parser prefixes the key and the value). */
export const LAYER_VERSION_ARN_EXPECTED =
  'a Lambda layer version ARN, arn:aws:lambda:<region>:<account>:layer:<name>:<version> ' +
  '(for the AWS Parameters and Secrets Lambda Extension: the ARN AWS lists for your region and arm64)';

/** The parts of a layer version ARN, or undefined when `text` is not one. */
export interface LayerVersionArnParts {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly name: string;
  readonly version: number;
}

/**
 * Splits a layer version ARN into its parts.
 *
 * @example
 * parseLayerVersionArn('arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118')
 * // { partition: 'aws', region: 'eu-west-1', account: '015030872274', name: 'AWS-Parameters-…-Arm64', version: 118 }
 */
export function parseLayerVersionArn(text: string): LayerVersionArnParts | undefined {
  const groups = LAYER_VERSION_ARN.exec(text)?.groups;
  if (!groups) return undefined;
  return {
    partition: groups.partition as string,
    region: groups.region as string,
    account: groups.account as string,
    name: groups.name as string,
    version: Number(groups.version),
  };
}

/** Whether `text` is a Lambda layer version ARN ({@link LAYER_VERSION_ARN}). */
export function isLayerVersionArn(text: string): boolean {
  return LAYER_VERSION_ARN.test(text);
}
