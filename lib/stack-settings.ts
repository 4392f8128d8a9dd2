/**
 * @module stack-settings
 * The catalogue's other half (see lambdas/platform/settings.ts): the settings only the stack
 * reads, each declared once, with its context key, schema (default, bounds, message), what it
 * sets in the stack and a one-line meaning. They never reach a function's environment, so they
 * stay out of the function bundles.
 */
import { CLOUDWATCH_CALL_MAX_MS } from '../lambdas/platform/aws/cloudwatch-client-limits.ts';
import {
  checked,
  decimal,
  flag,
  integer,
  list,
  type Setting,
  settingSchema,
  text,
  textOr,
} from '../lambdas/platform/settings.ts';
import { LAYER_VERSION_ARN, LAYER_VERSION_ARN_EXPECTED } from './layer-version-arn.ts';

/**
 * A setting only the stack reads, with its texts: never bundled into a function, so they stay
 * beside it (a runtime setting's are in lib/setting-texts.ts).
 */
export interface StackSetting<T = unknown> extends Setting<T> {
  /** What it sets in the stack. */
  readonly sets: string;
  /**
   * The default as the docs show it (markdown; a bare value is shown as code), when it is not
   * simply what the schema gives for an unset value.
   */
  readonly defaultText?: string;
  /** One line: what it means. */
  readonly meaning: string;
}

/**
 * Integration timeout of every route. API Gateway HTTP APIs cut an integration off after 30 s at
 * most (a hard limit); the CDK accepts up to 29 s, which the stack uses.
 */
export const HTTP_API_INTEGRATION_TIMEOUT_SECONDS = 29;

/**
 * Seconds a function keeps between the deadline of its outbound call and its Lambda timeout, to
 * build and return its answer after giving up: the -32003 envelope after `ERP_MAX_TIMEOUT` for
 * the execute functions, the failed `/_/metrics` answer after the CloudWatch client's limits for
 * aux.
 */
export const MIN_ANSWER_MARGIN_SECONDS = 2;

/**
 * The shortest `auxTimeout` the synth accepts (10 s): a `GET /_/metrics` whose CloudWatch call
 * fails takes up to `CLOUDWATCH_CALL_MAX_MS` (8 s, from the client's own limits), and the
 * function then needs {@link MIN_ANSWER_MARGIN_SECONDS} to answer. A shorter timeout would let
 * Lambda end the scrape first, a bare 5xx after a hang.
 */
export const MIN_AUX_TIMEOUT_SECONDS = Math.ceil(CLOUDWATCH_CALL_MAX_MS / 1000) + MIN_ANSWER_MARGIN_SECONDS;

/** The default "Concurrent executions" quota of an account and region. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/** The retention periods CloudWatch Logs accepts, in days (9999: never expire). */
export const LOG_RETENTION_DAYS = Object.freeze([
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
  9999,
] as const);

/** The default stack name (`stackName`). */
export const DEFAULT_STACK_NAME = 'ErpProxy';

/** AWS tag rules: key 1-128 characters, value 0-256, letters, digits, spaces and `_.:/=+-@`. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

/** Why a tag is refused, or undefined when AWS accepts it. */
function checkTag(name: string, value: string): string | undefined {
  if (name.length < 1 || name.length > 128 || !TAG_TEXT.test(name))
    return `tag name ${JSON.stringify(name)}: 1 to 128 letters, digits, spaces or _.:/=+-@`;
  if (/^aws:/i.test(name)) return `tag name ${JSON.stringify(name)}: the aws: prefix is reserved for AWS`;
  if (name === 'service') return 'tag name "service" is set by the stack (erp-proxy)';
  if (value.length > 256 || !TAG_TEXT.test(value))
    return `tag ${name}: the value must be up to 256 letters, digits, spaces or _.:/=+-@`;
  return undefined;
}

const PAIRS = 'name=value pairs separated by commas, or a JSON object';

/**
 * Tags: a JSON object in cdk.json or a settings file, or `k=v,k2=v2` on the command line (a value
 * cannot contain a comma there).
 */
const tagsSchema = settingSchema<Readonly<Record<string, string>>>((raw) => {
  if (raw === undefined) return { value: {} };
  let entries: [string, unknown][];
  if (typeof raw === 'string') {
    entries = [];
    for (const pair of raw.split(',')) {
      if (pair.trim() === '') continue;
      const at = pair.indexOf('=');
      if (at < 0) return { problem: `expected ${PAIRS}, got ${JSON.stringify(pair)}` };
      entries.push([pair.slice(0, at).trim(), pair.slice(at + 1).trim()]);
    }
  } else if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    entries = Object.entries(raw);
  } else {
    return { problem: `expected ${PAIRS}, got ${JSON.stringify(raw)}` };
  }
  const tags: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, entry] of entries) {
    const value = typeof entry === 'number' || typeof entry === 'boolean' ? String(entry) : entry;
    const problem =
      typeof value === 'string'
        ? checkTag(name, value)
        : `${name}: expected a string, got ${JSON.stringify(entry)}`;
    if (problem !== undefined) problems.push(problem);
    else tags[name] = value as string;
  }
  return problems.length > 0 ? { problem: problems.join('; ') } : { value: tags };
});

const HOST_LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const HOST_NAME = new RegExp(`^(\\*\\.)?(${HOST_LABEL}\\.)*${HOST_LABEL}$`, 'i');
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
/** CloudFormation stack names: a letter, then letters, digits and hyphens, up to 128. */
const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
/** Settings file names: `environments/<name>.json`. */
export const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

const matching = (pattern: RegExp) => (value: string) => pattern.test(value);
const ARN_HELP = 'the complete secret ARN, including the 6-character suffix Secrets Manager adds';
const CONCURRENCY = { min: 1, max: 10_000_000, unit: ' concurrent executions' } as const;

/** The settings only the stack reads, keyed by their name in `StackConfig`'s flat values. */
export const STACK_SETTINGS = Object.freeze({
  environment: {
    context: 'environment',
    schema: text({
      expected: 'a settings file name (lower-case letters, digits, -)',
      check: matching(ENVIRONMENT_NAME),
    }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'settings file',
    meaning:
      'read the settings from `environments/<name>.json` (see "Settings files"); a production file takes no other setting from the command line or cdk.json',
  },
  production: {
    context: 'production',
    schema: flag(false),
    readBy: [],
    sets: 'synth checks',
    meaning:
      'a production synth: settings only from its file, imported secrets only, and `licensePublicKey` required unless `acceptUnsignedLicenses`',
  },
  acceptUnsignedLicenses: {
    context: 'acceptUnsignedLicenses',
    schema: flag(false),
    readBy: [],
    sets: 'synth check',
    meaning: 'let a production synth run without `licensePublicKey`: any license document is then accepted',
  },
  stackName: {
    context: 'stackName',
    schema: checked<string, string>(textOr(DEFAULT_STACK_NAME), (name) =>
      STACK_NAME.test(name)
        ? { value: name }
        : {
            problem: `expected a stack name (a letter, then letters, digits and -), got ${JSON.stringify(name)}`,
          },
    ),
    defaultText: `\`${DEFAULT_STACK_NAME}\``,
    readBy: [],
    sets: 'stack',
    meaning: 'CloudFormation stack name (and prefix of alarm names)',
  },
  lambdaTimeoutSeconds: {
    context: 'lambdaTimeout',
    schema: integer({
      fallback: 28,
      min: 3,
      max: HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1,
      unit: ' seconds (below the 29 s API Gateway integration timeout)',
    }),
    readBy: [],
    sets: 'Lambda timeout of execute-v1, execute-v2, version, mcp',
    meaning: '3 to 28 s (below the 29 s integration timeout)',
  },
  auxTimeoutSeconds: {
    context: 'auxTimeout',
    schema: integer({
      fallback: 10,
      min: MIN_AUX_TIMEOUT_SECONDS,
      max: HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1,
      unit:
        ` seconds (a /_/metrics scrape that cannot reach CloudWatch fails after up to ${CLOUDWATCH_CALL_MAX_MS / 1000} s, ` +
        `and the function needs ${MIN_ANSWER_MARGIN_SECONDS} s more to answer)`,
    }),
    readBy: [],
    sets: 'Lambda timeout of aux',
    meaning: `${MIN_AUX_TIMEOUT_SECONDS} to 28 s: a \`GET /_/metrics\` whose CloudWatch call fails takes up to ${CLOUDWATCH_CALL_MAX_MS / 1000} s, and the function needs ${MIN_ANSWER_MARGIN_SECONDS} s more to answer`,
  },
  executeMemoryMb: {
    context: 'executeMemoryMb',
    schema: integer({ fallback: 512, min: 128, max: 10_240, unit: ' MB' }),
    readBy: [],
    sets: 'memory of execute-v1, execute-v2',
    meaning:
      '128 to 10240 MB (CPU grows with memory: compressing answers of several MB is the heaviest work)',
  },
  versionAndAuxMemoryMb: {
    context: 'auxMemoryMb',
    schema: integer({ fallback: 256, min: 128, max: 10_240, unit: ' MB' }),
    readBy: [],
    sets: 'memory of version, aux',
    meaning: '128 to 10240 MB',
  },
  mcpMemoryMb: {
    context: 'mcpMemoryMb',
    schema: integer({ fallback: 512, min: 128, max: 10_240, unit: ' MB' }),
    readBy: [],
    sets: 'memory of mcp',
    meaning:
      '128 to 10240 MB (a tool parses the ERP answer, up to `maxResponseBytes`, to cut it to size; CPU, and so the cold start of the larger bundle, grows with memory)',
  },
  throttleRateLimit: {
    context: 'throttleRateLimit',
    schema: decimal({ fallback: 100, min: 1, max: 1_000_000 }),
    readBy: [],
    sets: 'stage throttling',
    meaning: 'steady requests per second, all routes together',
  },
  throttleBurstLimit: {
    context: 'throttleBurstLimit',
    schema: integer({ fallback: 200, min: 1, max: 1_000_000 }),
    readBy: [],
    sets: 'stage throttling',
    meaning: 'burst size',
  },
  reserveConcurrency: {
    context: 'reserveConcurrency',
    schema: flag(true),
    readBy: [],
    sets: 'reserved concurrency of every function',
    meaning:
      '`false` deploys without reservations (new accounts whose quota is too small, see Concurrency); a slow ERP can then use the whole account concurrency',
  },
  executeConcurrency: {
    context: 'executeConcurrency',
    schema: integer(CONCURRENCY),
    defaultText: '*(sized: 200)*',
    readBy: [],
    sets: 'reserved concurrency of execute-v1 and of execute-v2 (each)',
    meaning: 'default: `throttleBurstLimit`, at most `throttleRateLimit` × `lambdaTimeout` (see Concurrency)',
  },
  versionConcurrency: {
    context: 'versionConcurrency',
    schema: integer(CONCURRENCY),
    defaultText: '*(sized: 20)*',
    readBy: [],
    sets: 'reserved concurrency of version',
    meaning: 'default: a tenth of the execute reservation (`executeConcurrency` when set), at least 5',
  },
  auxConcurrency: {
    context: 'auxConcurrency',
    schema: integer({ ...CONCURRENCY, fallback: 10 }),
    readBy: [],
    sets: 'reserved concurrency of aux',
    meaning: '`/_/about` and `/_/license` answer in milliseconds; `/_/metrics` is cached for 60 s',
  },
  mcpConcurrency: {
    context: 'mcpConcurrency',
    schema: integer(CONCURRENCY),
    defaultText: '*(sized: 20)*',
    readBy: [],
    sets: 'reserved concurrency of mcp',
    meaning:
      "default: version's, a tenth of the execute reservation (`executeConcurrency` when set), at least 5 (an agent makes one tool call at a time)",
  },
  accountConcurrency: {
    context: 'accountConcurrency',
    schema: integer({
      fallback: DEFAULT_ACCOUNT_CONCURRENCY,
      min: 1,
      max: 10_000_000,
      unit: ' (the Lambda "Concurrent executions" quota of the account and region)',
    }),
    readBy: [],
    sets: 'synth check',
    meaning:
      'the account\'s Lambda "Concurrent executions" quota in the region; the reservations must leave 100 unreserved (all of it below a quota of 100)',
  },
  tags: {
    context: 'tags',
    schema: tagsSchema,
    defaultText: '*(none)*',
    readBy: [],
    sets: 'every resource (stack tags)',
    meaning:
      '`owner=platform-team,cost-centre=CC-1234`, or an object in a settings file; AWS tag rules are checked; `service=erp-proxy` is always set',
  },
  logRetentionDays: {
    context: 'logRetentionDays',
    schema: checked<number, number>(integer({ fallback: 30, min: 1, max: 9999, unit: ' days' }), (days) =>
      (LOG_RETENTION_DAYS as readonly number[]).includes(days)
        ? { value: days }
        : { problem: `CloudWatch Logs accepts only ${LOG_RETENTION_DAYS.join(', ')}; got ${days}` },
    ),
    readBy: [],
    sets: 'all log groups',
    meaning: `one of CloudWatch's values: ${LOG_RETENTION_DAYS.join(', ')} (9999: never expire)`,
  },
  proxyKeysSecretArn: {
    context: 'proxyKeysSecretArn',
    schema: text({ expected: ARN_HELP, check: matching(SECRET_ARN) }),
    defaultText: '*(generated)*',
    readBy: [],
    sets: '`PROXY_KEYS_SECRET_ID`',
    meaning:
      'use this existing secret for the proxy keys (complete ARN, with the 6-character suffix); required in production',
  },
  licenseSecretArn: {
    context: 'licenseSecretArn',
    schema: text({ expected: ARN_HELP, check: matching(SECRET_ARN) }),
    defaultText: '*(placeholder)*',
    readBy: [],
    sets: '`LICENSE_SECRET_ID`',
    meaning: 'use this existing secret for the license (complete ARN); required in production',
  },
  mcpOauthIdentitiesSecretArn: {
    context: 'mcpOauthIdentitiesSecretArn',
    schema: text({ expected: ARN_HELP, check: matching(SECRET_ARN) }),
    defaultText: '*(created with `mcpOauthIssuers`)*',
    readBy: [],
    sets: '`MCP_OAUTH_IDENTITIES_SECRET_ID`',
    meaning:
      'use this existing secret for the OAuth identity map (complete ARN); without it, setting `mcpOauthIssuers` creates an empty one (see Remote agents with OAuth)',
  },
  secretsExtensionLayerArn: {
    context: 'secretsExtensionLayerArn',
    schema: text({ expected: LAYER_VERSION_ARN_EXPECTED, check: matching(LAYER_VERSION_ARN) }),
    defaultText: '*(from the pinned table)*',
    readBy: [],
    sets: 'layer of every function',
    meaning:
      "the AWS Parameters and Secrets Lambda Extension layer to use instead of the pinned table's (see \"The extension's layer\"); arm64, the stack's region",
  },
  secretsKmsKeyArn: {
    context: 'secretsKmsKeyArn',
    schema: text({ expected: 'a KMS key ARN (arn:aws:kms:...:key/...)', check: matching(KMS_KEY_ARN) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'function roles',
    meaning:
      'the customer-managed KMS key that encrypts the imported secrets: the functions get `kms:Decrypt` on it, through Secrets Manager only',
  },
  vpcId: {
    context: 'vpcId',
    schema: text({ expected: 'a VPC id (vpc-...)', check: matching(/^vpc-[0-9a-f]{8,17}$/) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: "functions' VPC",
    meaning: 'attach the functions to this VPC (for ERPs reachable only privately)',
  },
  vpcSubnetIds: {
    context: 'vpcSubnetIds',
    schema: list({ expected: 'subnet ids (subnet-...)', check: matching(/^subnet-[0-9a-f]{8,17}$/) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: "functions' subnets",
    meaning: 'private subnets (with a NAT gateway or VPC endpoints, see below); required with `vpcId`',
  },
  vpcSecurityGroupIds: {
    context: 'vpcSecurityGroupIds',
    schema: list({ expected: 'security group ids (sg-...)', check: matching(/^sg-[0-9a-f]{8,17}$/) }),
    defaultText: '*(one created)*',
    readBy: [],
    sets: "functions' security groups",
    meaning: 'existing security groups; by default the stack creates one with outbound access only',
  },
  domainName: {
    context: 'domainName',
    schema: text({ expected: 'a host name such as erp-proxy.example.com', check: matching(HOST_NAME) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'custom domain',
    meaning: 'e.g. `erp-proxy.example.com`; needs `certificateArn`',
  },
  certificateArn: {
    context: 'certificateArn',
    schema: text({ expected: 'an ACM certificate ARN', check: matching(CERTIFICATE_ARN) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'custom domain',
    meaning: "ACM certificate for `domainName`, in the stack's region",
  },
  hostedZoneId: {
    context: 'hostedZoneId',
    schema: text({ expected: 'a Route 53 hosted zone id (Z...)', check: matching(/^Z[A-Z0-9]{1,31}$/) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'Route 53',
    meaning:
      'with `hostedZoneName`, the stack creates the alias A record; otherwise point a CNAME at `CustomDomainTarget`',
  },
  hostedZoneName: {
    context: 'hostedZoneName',
    schema: text({ expected: 'the hosted zone domain, e.g. example.com', check: matching(HOST_NAME) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'Route 53',
    meaning: 'the hosted zone of `hostedZoneId`',
  },
  disableExecuteApiEndpoint: {
    context: 'disableExecuteApiEndpoint',
    schema: flag(false),
    readBy: [],
    sets: 'API',
    meaning: 'with a custom domain: turn off the default `execute-api` URL',
  },
  alarmEmail: {
    context: 'alarmEmail',
    schema: text({ expected: 'an e-mail address', check: matching(EMAIL) }),
    defaultText: '*(none)*',
    readBy: [],
    sets: 'SNS',
    meaning: 'subscribe this address to the alarm topic (ALARM and OK notifications)',
  },
  alarmTopicArn: {
    context: 'alarmTopicArn',
    schema: text({
      expected: 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)',
      check: matching(SNS_TOPIC_ARN),
    }),
    defaultText: '*(a topic the stack creates)*',
    readBy: [],
    sets: 'alarm actions',
    meaning: 'send every alarm to this existing SNS topic instead (one whose policy lets CloudWatch publish)',
  },
  alarm5xxRatePercent: {
    context: 'alarm5xxRatePercent',
    schema: decimal({ fallback: 5, min: 0.1, max: 100 }),
    readBy: [],
    sets: 'alarm',
    meaning: '5xx share of requests (5-minute periods, 2 of 3; needs at least 10 requests)',
  },
  alarmP99LatencyMs: {
    context: 'alarmP99LatencyMs',
    schema: integer({ fallback: 10_000, min: 100, max: 60_000, unit: ' ms' }),
    readBy: [],
    sets: 'alarm',
    meaning: 'API Gateway p99 latency (3 periods of 5 minutes)',
  },
  alarmUpstreamTimeouts: {
    context: 'alarmUpstreamTimeouts',
    schema: integer({ fallback: 5, min: 1, max: 1_000_000 }),
    readBy: [],
    sets: 'alarm',
    meaning: 'upstream timeouts (-32003) per 5 minutes, all APIs',
  },
  alarmBrakeAgeMinutes: {
    context: 'alarmBrakeAgeMinutes',
    schema: integer({ fallback: 60, min: 5, max: 10_080, unit: ' minutes' }),
    readBy: [],
    sets: 'alarm',
    meaning:
      "age of the oldest operator's brake in force (docs/operators.md): a brake forgotten after the incident",
  },
} as const satisfies Record<string, StackSetting>);
