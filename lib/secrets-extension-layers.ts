/**
 * @module secrets-extension-layers
 * The layer of the AWS Parameters and Secrets Lambda Extension for each region and architecture,
 * pinned, in this one place. Every ARN below is copied from AWS's table; none is derived.
 *
 * Source: AWS Systems Manager User Guide, "Using Parameter Store parameters in AWS Lambda
 * functions", section "AWS Parameters and Secrets Lambda Extension ARNs" (the Secrets Manager
 * guide's "Use AWS Secrets Manager secrets in AWS Lambda functions" sends readers there):
 * {@link SECRETS_EXTENSION_LAYERS_SOURCE}. Both of its tables ("x86_64 and x86" and "ARM64 and
 * Mac with Apple silicon") say "Last updated: August 21, 2026"; they were read on 2026-11-24 from
 * the copy of that page kept in the public repository crowecawcaw/aws-docs-history
 * (docs/systems-manager/latest/userguide/ps-integration-lambda-extensions.md, commit
 * 10a0e19cee019f128a04f3319656eb389c99b7d9), the live page being out of reach from where this
 * was written. The accounts and layer names of the 21 regions CDK 2.276's own table knows match
 * CDK's (only the layer versions are newer).
 *
 * The page names no extension release (such as CDK's 1.0.103): it lists one layer version per
 * region and architecture, and AWS republishes the layer region by region, so the numbers differ.
 * In this table: arm64 from version 49 (me-central-1) and 55 (me-south-1), the two regions that
 * have not moved since the page's July 2026 edition, to 133 (us-east-2); x86_64 from 5
 * (eusc-de-east-1) to 133. The page lists no arm64 layer for eusc-de-east-1.
 *
 * To update: docs/deployment.md, "Updating the extension layer table".
 */

/** Where {@link SECRETS_EXTENSION_LAYERS} comes from, and when it was read. */
export const SECRETS_EXTENSION_LAYERS_SOURCE = Object.freeze({
  url: 'https://docs.aws.amazon.com/systems-manager/latest/userguide/ps-integration-lambda-extensions.html#ps-integration-lambda-extensions-add',
  /** The "Last updated" date the page gives above both tables. */
  lastUpdated: '2026-08-21',
  /** When the table was copied from it. */
  readOn: '2026-11-24',
});

/** The architectures AWS publishes the layer for, named as Lambda names them. */
export const LAYER_ARCHITECTURES = Object.freeze(['arm64', 'x86_64'] as const);
export type LayerArchitecture = (typeof LAYER_ARCHITECTURES)[number];

/** Layer version ARN of the extension per region, for each architecture the page lists there. */
export type SecretsExtensionLayerTable = Readonly<
  Record<string, Readonly<Partial<Record<LayerArchitecture, string>>>>
>;

/** The extension's layer version ARNs, by region (with the page's name of the region). */
export const SECRETS_EXTENSION_LAYERS: SecretsExtensionLayerTable = Object.freeze({
  // Africa (Cape Town)
  'af-south-1': {
    arm64:
      'arn:aws:lambda:af-south-1:317013901791:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:121',
    x86_64: 'arn:aws:lambda:af-south-1:317013901791:layer:AWS-Parameters-and-Secrets-Lambda-Extension:124',
  },
  // Asia Pacific (Hong Kong)
  'ap-east-1': {
    arm64:
      'arn:aws:lambda:ap-east-1:768336418462:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118',
    x86_64: 'arn:aws:lambda:ap-east-1:768336418462:layer:AWS-Parameters-and-Secrets-Lambda-Extension:121',
  },
  // Asia Pacific (Taipei)
  'ap-east-2': {
    arm64: 'arn:aws:lambda:ap-east-2:890742577149:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:89',
    x86_64: 'arn:aws:lambda:ap-east-2:890742577149:layer:AWS-Parameters-and-Secrets-Lambda-Extension:93',
  },
  // Asia Pacific (Tokyo)
  'ap-northeast-1': {
    arm64:
      'arn:aws:lambda:ap-northeast-1:133490724326:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:124',
    x86_64:
      'arn:aws:lambda:ap-northeast-1:133490724326:layer:AWS-Parameters-and-Secrets-Lambda-Extension:124',
  },
  // Asia Pacific (Seoul)
  'ap-northeast-2': {
    arm64:
      'arn:aws:lambda:ap-northeast-2:738900069198:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:120',
    x86_64:
      'arn:aws:lambda:ap-northeast-2:738900069198:layer:AWS-Parameters-and-Secrets-Lambda-Extension:123',
  },
  // Asia Pacific (Osaka)
  'ap-northeast-3': {
    arm64:
      'arn:aws:lambda:ap-northeast-3:576959938190:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:115',
    x86_64:
      'arn:aws:lambda:ap-northeast-3:576959938190:layer:AWS-Parameters-and-Secrets-Lambda-Extension:118',
  },
  // Asia Pacific (Mumbai)
  'ap-south-1': {
    arm64:
      'arn:aws:lambda:ap-south-1:176022468876:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:111',
    x86_64: 'arn:aws:lambda:ap-south-1:176022468876:layer:AWS-Parameters-and-Secrets-Lambda-Extension:111',
  },
  // Asia Pacific (Hyderabad)
  'ap-south-2': {
    arm64:
      'arn:aws:lambda:ap-south-2:070087711984:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64: 'arn:aws:lambda:ap-south-2:070087711984:layer:AWS-Parameters-and-Secrets-Lambda-Extension:115',
  },
  // Asia Pacific (Singapore)
  'ap-southeast-1': {
    arm64:
      'arn:aws:lambda:ap-southeast-1:044395824272:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:125',
    x86_64:
      'arn:aws:lambda:ap-southeast-1:044395824272:layer:AWS-Parameters-and-Secrets-Lambda-Extension:125',
  },
  // Asia Pacific (Sydney)
  'ap-southeast-2': {
    arm64:
      'arn:aws:lambda:ap-southeast-2:665172237481:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:129',
    x86_64:
      'arn:aws:lambda:ap-southeast-2:665172237481:layer:AWS-Parameters-and-Secrets-Lambda-Extension:129',
  },
  // Asia Pacific (Jakarta)
  'ap-southeast-3': {
    arm64:
      'arn:aws:lambda:ap-southeast-3:490737872127:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:115',
    x86_64:
      'arn:aws:lambda:ap-southeast-3:490737872127:layer:AWS-Parameters-and-Secrets-Lambda-Extension:118',
  },
  // Asia Pacific (Melbourne)
  'ap-southeast-4': {
    arm64:
      'arn:aws:lambda:ap-southeast-4:090732460067:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64:
      'arn:aws:lambda:ap-southeast-4:090732460067:layer:AWS-Parameters-and-Secrets-Lambda-Extension:108',
  },
  // Asia Pacific (Malaysia)
  'ap-southeast-5': {
    arm64:
      'arn:aws:lambda:ap-southeast-5:381492012281:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64:
      'arn:aws:lambda:ap-southeast-5:381492012281:layer:AWS-Parameters-and-Secrets-Lambda-Extension:107',
  },
  // Asia Pacific (New Zealand)
  'ap-southeast-6': {
    arm64:
      'arn:aws:lambda:ap-southeast-6:995508174458:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:100',
    x86_64:
      'arn:aws:lambda:ap-southeast-6:995508174458:layer:AWS-Parameters-and-Secrets-Lambda-Extension:102',
  },
  // Asia Pacific (Thailand)
  'ap-southeast-7': {
    arm64:
      'arn:aws:lambda:ap-southeast-7:941377119484:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64:
      'arn:aws:lambda:ap-southeast-7:941377119484:layer:AWS-Parameters-and-Secrets-Lambda-Extension:108',
  },
  // Canada (Central)
  'ca-central-1': {
    arm64:
      'arn:aws:lambda:ca-central-1:200266452380:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:129',
    x86_64: 'arn:aws:lambda:ca-central-1:200266452380:layer:AWS-Parameters-and-Secrets-Lambda-Extension:132',
  },
  // Canada West (Calgary)
  'ca-west-1': {
    arm64: 'arn:aws:lambda:ca-west-1:243964427225:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:94',
    x86_64: 'arn:aws:lambda:ca-west-1:243964427225:layer:AWS-Parameters-and-Secrets-Lambda-Extension:95',
  },
  // China (Beijing)
  'cn-north-1': {
    arm64:
      'arn:aws-cn:lambda:cn-north-1:287114880934:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64: 'arn:aws-cn:lambda:cn-north-1:287114880934:layer:AWS-Parameters-and-Secrets-Lambda-Extension:118',
  },
  // China (Ningxia)
  'cn-northwest-1': {
    arm64:
      'arn:aws-cn:lambda:cn-northwest-1:287310001119:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:107',
    x86_64:
      'arn:aws-cn:lambda:cn-northwest-1:287310001119:layer:AWS-Parameters-and-Secrets-Lambda-Extension:118',
  },
  // Europe (Frankfurt)
  'eu-central-1': {
    arm64:
      'arn:aws:lambda:eu-central-1:187925254637:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:125',
    x86_64: 'arn:aws:lambda:eu-central-1:187925254637:layer:AWS-Parameters-and-Secrets-Lambda-Extension:125',
  },
  // Europe (Zurich)
  'eu-central-2': {
    arm64:
      'arn:aws:lambda:eu-central-2:772501565639:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:94',
    x86_64: 'arn:aws:lambda:eu-central-2:772501565639:layer:AWS-Parameters-and-Secrets-Lambda-Extension:102',
  },
  // Europe (Stockholm)
  'eu-north-1': {
    arm64:
      'arn:aws:lambda:eu-north-1:427196147048:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:116',
    x86_64: 'arn:aws:lambda:eu-north-1:427196147048:layer:AWS-Parameters-and-Secrets-Lambda-Extension:119',
  },
  // Europe (Milan)
  'eu-south-1': {
    arm64:
      'arn:aws:lambda:eu-south-1:325218067255:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:116',
    x86_64: 'arn:aws:lambda:eu-south-1:325218067255:layer:AWS-Parameters-and-Secrets-Lambda-Extension:119',
  },
  // Europe (Spain)
  'eu-south-2': {
    arm64:
      'arn:aws:lambda:eu-south-2:524103009944:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:106',
    x86_64: 'arn:aws:lambda:eu-south-2:524103009944:layer:AWS-Parameters-and-Secrets-Lambda-Extension:114',
  },
  // Europe (Ireland)
  'eu-west-1': {
    arm64:
      'arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118',
    x86_64: 'arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension:118',
  },
  // Europe (London)
  'eu-west-2': {
    arm64:
      'arn:aws:lambda:eu-west-2:133256977650:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:123',
    x86_64: 'arn:aws:lambda:eu-west-2:133256977650:layer:AWS-Parameters-and-Secrets-Lambda-Extension:123',
  },
  // Europe (Paris)
  'eu-west-3': {
    arm64:
      'arn:aws:lambda:eu-west-3:780235371811:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:118',
    x86_64: 'arn:aws:lambda:eu-west-3:780235371811:layer:AWS-Parameters-and-Secrets-Lambda-Extension:121',
  },
  // AWS European Sovereign Cloud (Germany)
  'eusc-de-east-1': {
    x86_64:
      'arn:aws-eusc:lambda:eusc-de-east-1:041683371183:layer:AWS-Parameters-and-Secrets-Lambda-Extension:5',
  },
  // Israel (Tel Aviv)
  'il-central-1': {
    arm64:
      'arn:aws:lambda:il-central-1:148806536434:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:94',
    x86_64: 'arn:aws:lambda:il-central-1:148806536434:layer:AWS-Parameters-and-Secrets-Lambda-Extension:95',
  },
  // Middle East (UAE)
  'me-central-1': {
    arm64:
      'arn:aws:lambda:me-central-1:858974508948:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:49',
    x86_64: 'arn:aws:lambda:me-central-1:858974508948:layer:AWS-Parameters-and-Secrets-Lambda-Extension:60',
  },
  // Middle East (Bahrain)
  'me-south-1': {
    arm64:
      'arn:aws:lambda:me-south-1:832021897121:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:55',
    x86_64: 'arn:aws:lambda:me-south-1:832021897121:layer:AWS-Parameters-and-Secrets-Lambda-Extension:58',
  },
  // Mexico (Central)
  'mx-central-1': {
    arm64:
      'arn:aws:lambda:mx-central-1:241533131596:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:91',
    x86_64: 'arn:aws:lambda:mx-central-1:241533131596:layer:AWS-Parameters-and-Secrets-Lambda-Extension:92',
  },
  // South America (São Paulo)
  'sa-east-1': {
    arm64:
      'arn:aws:lambda:sa-east-1:933737806257:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:124',
    x86_64: 'arn:aws:lambda:sa-east-1:933737806257:layer:AWS-Parameters-and-Secrets-Lambda-Extension:127',
  },
  // US East (N. Virginia)
  'us-east-1': {
    arm64:
      'arn:aws:lambda:us-east-1:177933569100:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:116',
    x86_64: 'arn:aws:lambda:us-east-1:177933569100:layer:AWS-Parameters-and-Secrets-Lambda-Extension:116',
  },
  // US East (Ohio)
  'us-east-2': {
    arm64:
      'arn:aws:lambda:us-east-2:590474943231:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:133',
    x86_64: 'arn:aws:lambda:us-east-2:590474943231:layer:AWS-Parameters-and-Secrets-Lambda-Extension:133',
  },
  // AWS GovCloud (US-East)
  'us-gov-east-1': {
    arm64:
      'arn:aws-us-gov:lambda:us-gov-east-1:129776340158:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:106',
    x86_64:
      'arn:aws-us-gov:lambda:us-gov-east-1:129776340158:layer:AWS-Parameters-and-Secrets-Lambda-Extension:106',
  },
  // AWS GovCloud (US-West)
  'us-gov-west-1': {
    arm64:
      'arn:aws-us-gov:lambda:us-gov-west-1:127562683043:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:109',
    x86_64:
      'arn:aws-us-gov:lambda:us-gov-west-1:127562683043:layer:AWS-Parameters-and-Secrets-Lambda-Extension:120',
  },
  // US West (N. California)
  'us-west-1': {
    arm64:
      'arn:aws:lambda:us-west-1:997803712105:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:110',
    x86_64: 'arn:aws:lambda:us-west-1:997803712105:layer:AWS-Parameters-and-Secrets-Lambda-Extension:113',
  },
  // US West (Oregon)
  'us-west-2': {
    arm64:
      'arn:aws:lambda:us-west-2:345057560386:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:116',
    x86_64: 'arn:aws:lambda:us-west-2:345057560386:layer:AWS-Parameters-and-Secrets-Lambda-Extension:116',
  },
});
