/**
 * @module stack-config
 * The deployment settings of the stack, read from CDK context (`cdk.json` or `-c key=value`) and
 * checked once, before any construct is built. A bad value fails the synth with one message that
 * names every bad key, what was expected and what was given.
 *
 * Values passed with `-c` arrive as strings, values in `cdk.json` keep their JSON type, so every
 * parser accepts both (`"25"` and `25`, `"a,b"` and `["a","b"]`, `"true"` and `true`).
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CLOUDWATCH_CALL_MAX_MS } from '../lambdas/platform/cloudwatch-client-limits.ts';
import { LOG_LEVELS, type LogLevelName } from '../lambdas/platform/config.ts';
import { parsePublicKey } from '../lambdas/platform/license.ts';
import { AUX_PUBLIC_NAMES, type AuxPublicName, isAuxPublicName } from '../lambdas/platform/names.ts';
import { parseTargetList } from '../lambdas/platform/target-list.ts';
import { LAYER_VERSION_ARN, LAYER_VERSION_ARN_EXPECTED } from './layer-version-arn.ts';

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

/**
 * Lambda keeps this many concurrent executions of an account unreserved: a deployment whose
 * reserved concurrency would leave fewer is refused by Lambda
 * ("decreases account's UnreservedConcurrentExecution below its minimum value").
 */
export const LAMBDA_UNRESERVED_MINIMUM = 100;

/** The default "Concurrent executions" quota of an account and region. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/** Reserved concurrency of each function (an upper bound on its concurrent executions). */
export interface ReservedConcurrency {
  readonly 'execute-v1': number;
  readonly 'execute-v2': number;
  readonly version: number;
  readonly aux: number;
}

/** AWS tag rules: key 1-128 characters, value 0-256, letters, digits, spaces and `_.:/=+-@`. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

export type LogLevel = LogLevelName;

export interface VpcAttachment {
  readonly vpcId: string;
  readonly subnetIds: readonly string[];
  /** Empty: the stack creates one security group (egress only) for the functions. */
  readonly securityGroupIds: readonly string[];
}

export interface CustomDomain {
  readonly domainName: string;
  /** ACM certificate in the stack's region, covering `domainName`. */
  readonly certificateArn: string;
  /** When set with `hostedZoneName`, the stack creates the alias A record too. */
  readonly hostedZoneId: string | undefined;
  readonly hostedZoneName: string | undefined;
  /** Turn off the `execute-api` URL so the custom domain is the only way in. */
  readonly disableExecuteApiEndpoint: boolean;
}

export interface AlarmSettings {
  /** Subscribe this address to the alarm topic (the recipient must confirm the subscription). */
  readonly email: string | undefined;
  /** Send the alarm actions to this existing SNS topic instead of one the stack creates. */
  readonly topicArn: string | undefined;
  /** API Gateway 5xx responses, percent of requests over 5 minutes. */
  readonly serverErrorRatePercent: number;
  /** API Gateway p99 latency, milliseconds over 5 minutes. */
  readonly p99LatencyMs: number;
  /** Upstream timeouts (-32003), all APIs together, count over 5 minutes. */
  readonly upstreamTimeouts: number;
  /** Alarm when the license expires within this many days. */
  readonly licenseWarningDays: number;
}

/** Everything the stack needs to know, with defaults applied. */
export interface StackConfig {
  /** `ERP_ALLOWED_TARGETS`: host names (`*.` wildcards allowed) and CIDRs. Empty by default. */
  readonly allowedTargets: readonly string[];
  /** `ERP_ALLOWED_DATABASES`. Empty: any database. */
  readonly allowedDatabases: readonly string[];
  /** `ERP_DEFAULT_TIMEOUT`, seconds. */
  readonly defaultTimeoutSeconds: number;
  /** `ERP_MAX_TIMEOUT`, seconds. */
  readonly maxTimeoutSeconds: number;
  /** Timeout of the execute and version functions, seconds. */
  readonly lambdaTimeoutSeconds: number;
  /** Timeout of the aux function, seconds. */
  readonly auxTimeoutSeconds: number;
  /** Memory of execute-v1 and execute-v2, MB. */
  readonly executeMemoryMb: number;
  /** Memory of version and aux, MB. */
  readonly auxMemoryMb: number;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** Reserved concurrency per function (defaults: {@link defaultReservedConcurrency}). */
  readonly reservedConcurrency: ReservedConcurrency;
  /** The account's concurrent-executions quota in the region, which the reservations must fit. */
  readonly accountConcurrency: number;
  /** Tags for every resource of the stack (besides `service`). */
  readonly tags: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  readonly stripDebug: boolean;
  /** `MAX_RESPONSE_BYTES`; undefined keeps the runtime default. */
  readonly maxResponseBytes: number | undefined;
  readonly secretsMaxAgeSeconds: number;
  readonly auxPublic: readonly AuxPublicName[];
  /** Existing proxy-keys secret (complete ARN). Undefined: the stack generates one. */
  readonly proxyKeysSecretArn: string | undefined;
  /** Existing license secret (complete ARN). Undefined: the stack creates a placeholder. */
  readonly licenseSecretArn: string | undefined;
  /**
   * The customer-managed KMS key that encrypts the imported secrets, when it is not the account's
   * default `aws/secretsmanager` key: the functions then need `kms:Decrypt` on it (through
   * Secrets Manager only) to read them.
   */
  readonly secretsKmsKeyArn: string | undefined;
  /** The extension's layer for every function, instead of lib/secrets-extension-layers.ts's. */
  readonly secretsExtensionLayerArn: string | undefined;
  /** `LICENSE_PUBLIC_KEY`: Ed25519 public key that license signatures must verify against. */
  readonly licensePublicKey: string | undefined;
  readonly vpc: VpcAttachment | undefined;
  readonly domain: CustomDomain | undefined;
  readonly alarms: AlarmSettings;
  /** `BUILD_COMMIT` and `BUILD_TIME`, shown by `/_/about`. */
  readonly buildCommit: string | undefined;
  readonly buildTime: string | undefined;
}

/**
 * Every context key the CDK app reads, defined once: the keys {@link parseStackConfig} reads (it
 * can read no other: its reader takes a {@link ContextKey}), and `stackName`, which
 * bin/erp-proxy.ts reads. docs/deployment.md's "Context parameters" table lists exactly these
 * (test/infra/context-docs.test.ts).
 */
export const CONTEXT_KEYS = [
  'allowedTargets',
  'allowedDatabases',
  'defaultTimeout',
  'maxTimeout',
  'lambdaTimeout',
  'auxTimeout',
  'executeMemoryMb',
  'auxMemoryMb',
  'throttleRateLimit',
  'throttleBurstLimit',
  'executeConcurrency',
  'versionConcurrency',
  'auxConcurrency',
  'accountConcurrency',
  'tags',
  'logRetentionDays',
  'logLevel',
  'stripDebug',
  'maxResponseBytes',
  'secretsMaxAge',
  'auxPublic',
  'proxyKeysSecretArn',
  'licenseSecretArn',
  'secretsKmsKeyArn',
  'secretsExtensionLayerArn',
  'licensePublicKey',
  'vpcId',
  'vpcSubnetIds',
  'vpcSecurityGroupIds',
  'domainName',
  'certificateArn',
  'hostedZoneId',
  'hostedZoneName',
  'disableExecuteApiEndpoint',
  'alarmEmail',
  'alarmTopicArn',
  'alarm5xxRatePercent',
  'alarmP99LatencyMs',
  'alarmUpstreamTimeouts',
  'licenseWarningDays',
  'stackName',
  'buildCommit',
  'buildTime',
] as const;

/** A context key of {@link CONTEXT_KEYS}. */
export type ContextKey = (typeof CONTEXT_KEYS)[number];

/** The defaults of the context keys that have a fixed one. Documented in docs/deployment.md. */
export const CONTEXT_DEFAULTS = Object.freeze({
  allowedTargets: '',
  allowedDatabases: '',
  defaultTimeout: 15,
  maxTimeout: 25,
  lambdaTimeout: 28,
  auxTimeout: 10,
  executeMemoryMb: 512,
  auxMemoryMb: 256,
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
  accountConcurrency: DEFAULT_ACCOUNT_CONCURRENCY,
  auxConcurrency: 10,
  logRetentionDays: 30,
  logLevel: 'INFO',
  stripDebug: false,
  secretsMaxAge: 300,
  auxPublic: '',
  alarm5xxRatePercent: 5,
  alarmP99LatencyMs: 10_000,
  alarmUpstreamTimeouts: 5,
  licenseWarningDays: 14,
} satisfies Partial<Record<ContextKey, string | number | boolean>>);

/** Thrown when the context holds bad values; the message lists all of them. */
export class StackConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid CDK context:\n  - ${problems.join('\n  - ')}\nSee docs/deployment.md for the parameters.`);
    this.name = 'StackConfigError';
    this.problems = problems;
  }
}

/** Reads one context key; `node.tryGetContext` fits. */
export type ContextReader = (key: ContextKey) => unknown;

const HOST_LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const HOST_NAME = new RegExp(`^(\\*\\.)?(${HOST_LABEL}\\.)*${HOST_LABEL}$`, 'i');
const DATABASE_NAME = /^[A-Za-z0-9_.-]+$/;
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

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

/**
 * Default reserved concurrency, sized from the stage throttle and the Lambda timeout.
 *
 * - Each execute function: the stage's burst limit, capped at the rate limit times the Lambda
 *   timeout (more could never be used: Little's law, concurrency = rate x duration). At the
 *   defaults that is 200 for each of execute-v1 and execute-v2: the full 100 requests/s while
 *   calls average up to 2 s, and a slow ERP (every call waiting the 25 s maxTimeout) holds at
 *   most 200 executions of each, 400 for the two, instead of 2,500.
 * - version: a tenth of that, at least 5 (one short call per session, not per request).
 * - aux: 10 (`CONTEXT_DEFAULTS.auxConcurrency`): /_/about and /_/license answer in
 *   milliseconds, and /_/metrics is cached for 60 s.
 *
 * The four together reserve 200 + 200 + 20 + 10 = 430 by default.
 */
export function defaultReservedConcurrency(settings: {
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  readonly lambdaTimeoutSeconds: number;
}): { readonly execute: number; readonly version: number } {
  const execute = Math.max(
    1,
    Math.min(
      settings.throttleBurstLimit,
      Math.ceil(settings.throttleRateLimit * settings.lambdaTimeoutSeconds),
    ),
  );
  return { execute, version: Math.max(5, Math.ceil(execute / 10)) };
}

/**
 * Whether the runtime accepts an `ERP_ALLOWED_TARGETS` entry: the check is the runtime's own
 * (`parseTargetList`, which the target policy compiles the list with), so an entry the synth
 * lets through can never fail every function at cold start.
 */
function isTargetPattern(entry: string): boolean {
  try {
    parseTargetList([entry]);
    return true;
  } catch {
    return false;
  }
}

class ContextParser {
  readonly problems: string[] = [];

  constructor(private readonly read: ContextReader) {}

  private raw(key: ContextKey): unknown {
    const value = this.read(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' && value.trim() === '') return undefined;
    return value;
  }

  private fail(key: string, expected: string, value: unknown): undefined {
    this.problems.push(`${key}: expected ${expected}, got ${JSON.stringify(value)}`);
    return undefined;
  }

  string(
    key: ContextKey,
    pattern?: RegExp,
    expected = 'a string',
    check?: (text: string) => boolean,
  ): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.fail(key, expected, value);
    const text = value.trim();
    if (pattern && !pattern.test(text)) return this.fail(key, expected, value);
    if (check && !check(text)) return this.fail(key, expected, value);
    return text;
  }

  list(key: ContextKey, check?: (entry: string) => boolean, expected = 'a comma-separated list'): string[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    let entries: unknown[];
    if (typeof value === 'string') entries = value.split(',');
    else if (Array.isArray(value)) entries = value;
    else return this.fail(key, expected, value) ?? [];
    // Given, but only separators and blanks (" , "): a mistake, never a request for the default.
    if (entries.length > 0 && entries.every((entry) => typeof entry === 'string' && entry.trim() === '')) {
      if (typeof value !== 'string' || value.trim() !== '') {
        this.problems.push(`${key}: lists nothing (only commas and spaces); leave it out for the default`);
      }
      return [];
    }
    const out: string[] = [];
    for (const entry of entries) {
      if (typeof entry !== 'string') {
        this.fail(key, `${expected} (strings only)`, entry);
        continue;
      }
      const text = entry.trim();
      if (text === '') continue;
      if (check && !check(text)) {
        this.problems.push(`${key}: "${text}" is not valid; expected ${expected}`);
        continue;
      }
      out.push(text);
    }
    return out;
  }

  integer(key: ContextKey, fallback: number, min: number, max: number, unit?: string): number;
  integer(key: ContextKey, fallback: undefined, min: number, max: number, unit?: string): number | undefined;
  integer(
    key: ContextKey,
    fallback: number | undefined,
    min: number,
    max: number,
    unit = '',
  ): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const number = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
      this.fail(key, `an integer from ${min} to ${max}${unit}`, value);
      return fallback;
    }
    return number;
  }

  number(key: ContextKey, fallback: number, min: number, max: number): number {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const number = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number) || number < min || number > max) {
      this.fail(key, `a number from ${min} to ${max}`, value);
      return fallback;
    }
    return number;
  }

  /**
   * A map of strings: a JSON object in cdk.json, or `k=v,k2=v2` on the command line (a value
   * cannot contain a comma there).
   */
  map(key: ContextKey, check: (name: string, value: string) => string | undefined): Record<string, string> {
    const value = this.raw(key);
    if (value === undefined) return {};
    let entries: [string, unknown][];
    if (typeof value === 'string') {
      entries = [];
      for (const pair of value.split(',')) {
        if (pair.trim() === '') continue;
        const at = pair.indexOf('=');
        if (at < 0) {
          this.fail(key, 'name=value pairs separated by commas, or a JSON object', pair);
          continue;
        }
        entries.push([pair.slice(0, at).trim(), pair.slice(at + 1).trim()]);
      }
    } else if (typeof value === 'object' && !Array.isArray(value)) {
      entries = Object.entries(value as Record<string, unknown>);
    } else {
      return this.fail(key, 'name=value pairs separated by commas, or a JSON object', value) ?? {};
    }
    const out: Record<string, string> = {};
    for (const [name, entry] of entries) {
      const text = typeof entry === 'number' || typeof entry === 'boolean' ? String(entry) : entry;
      if (typeof text !== 'string') {
        this.fail(`${key}.${name}`, 'a string', entry);
        continue;
      }
      const problem = check(name, text);
      if (problem !== undefined) this.problems.push(`${key}: ${problem}`);
      else out[name] = text;
    }
    return out;
  }

  boolean(key: ContextKey, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|false)$/i.test(value.trim()))
      return value.trim().toLowerCase() === 'true';
    this.fail(key, 'true or false', value);
    return fallback;
  }
}

const RETENTION_VALUES = new Set<number>(
  Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'),
);

/**
 * Reads and checks the stack settings.
 *
 * @example
 * const config = parseStackConfig((key) => app.node.tryGetContext(key));
 */
export function parseStackConfig(read: ContextReader): StackConfig {
  const p = new ContextParser(read);
  const d = CONTEXT_DEFAULTS;

  const allowedTargets = p.list(
    'allowedTargets',
    isTargetPattern,
    'host names (optionally starting with "*."), IP addresses or CIDRs, without scheme or port',
  );
  const allowedDatabases = p.list('allowedDatabases', (name) => DATABASE_NAME.test(name), 'database names');

  const defaultTimeoutSeconds = p.integer('defaultTimeout', d.defaultTimeout, 1, 900, ' seconds');
  const maxTimeoutSeconds = p.integer('maxTimeout', d.maxTimeout, 1, 900, ' seconds');
  const lambdaTimeoutSeconds = p.integer(
    'lambdaTimeout',
    d.lambdaTimeout,
    3,
    HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1,
    ' seconds (below the 29 s API Gateway integration timeout)',
  );
  const auxTimeoutSeconds = p.integer(
    'auxTimeout',
    d.auxTimeout,
    MIN_AUX_TIMEOUT_SECONDS,
    HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1,
    ` seconds (a /_/metrics scrape that cannot reach CloudWatch fails after up to ${CLOUDWATCH_CALL_MAX_MS / 1000} s, ` +
      `and the function needs ${MIN_ANSWER_MARGIN_SECONDS} s more to answer)`,
  );
  if (defaultTimeoutSeconds > maxTimeoutSeconds) {
    p.problems.push(`defaultTimeout (${defaultTimeoutSeconds}) is above maxTimeout (${maxTimeoutSeconds})`);
  }
  if (maxTimeoutSeconds + MIN_ANSWER_MARGIN_SECONDS > lambdaTimeoutSeconds) {
    p.problems.push(
      `maxTimeout (${maxTimeoutSeconds}) must be at least ${MIN_ANSWER_MARGIN_SECONDS} s below lambdaTimeout ` +
        `(${lambdaTimeoutSeconds}), so the proxy answers -32003 before Lambda or API Gateway cut the request off`,
    );
  }

  const executeMemoryMb = p.integer('executeMemoryMb', d.executeMemoryMb, 128, 10_240, ' MB');
  const auxMemoryMb = p.integer('auxMemoryMb', d.auxMemoryMb, 128, 10_240, ' MB');
  const throttleRateLimit = p.number('throttleRateLimit', d.throttleRateLimit, 1, 1_000_000);
  const throttleBurstLimit = p.integer('throttleBurstLimit', d.throttleBurstLimit, 1, 1_000_000);

  const accountConcurrency = p.integer(
    'accountConcurrency',
    d.accountConcurrency,
    1,
    10_000_000,
    ' (the Lambda "Concurrent executions" quota of the account and region)',
  );
  const sized = defaultReservedConcurrency({
    throttleRateLimit,
    throttleBurstLimit,
    lambdaTimeoutSeconds,
  });
  const concurrency = (key: ContextKey, fallback: number): number =>
    p.integer(key, fallback, 1, 10_000_000, ' concurrent executions');
  const executeConcurrency = concurrency('executeConcurrency', sized.execute);
  const reservedConcurrency: ReservedConcurrency = {
    'execute-v1': executeConcurrency,
    'execute-v2': executeConcurrency,
    version: concurrency('versionConcurrency', sized.version),
    aux: concurrency('auxConcurrency', d.auxConcurrency),
  };
  const reservedTotal = Object.values(reservedConcurrency).reduce((sum, n) => sum + n, 0);
  if (reservedTotal > accountConcurrency - LAMBDA_UNRESERVED_MINIMUM) {
    p.problems.push(
      `reserved concurrency: the four functions reserve ${reservedTotal} (execute-v1 and execute-v2 ${executeConcurrency} each, ` +
        `version ${reservedConcurrency.version}, aux ${reservedConcurrency.aux}), but an account with accountConcurrency ` +
        `${accountConcurrency} can reserve at most ${Math.max(0, accountConcurrency - LAMBDA_UNRESERVED_MINIMUM)} ` +
        `(Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} unreserved, and would refuse the deployment). Lower ` +
        'executeConcurrency/versionConcurrency/auxConcurrency (or the throttle they default from), or raise the ' +
        'quota in Service Quotas and set accountConcurrency to it (docs/deployment.md, Concurrency)',
    );
  }
  const tags = p.map('tags', checkTag);

  const retentionDays = p.integer('logRetentionDays', d.logRetentionDays, 1, RetentionDays.INFINITE, ' days');
  let logRetention = RetentionDays.ONE_MONTH;
  if (RETENTION_VALUES.has(retentionDays)) logRetention = retentionDays as RetentionDays;
  else {
    p.problems.push(
      `logRetentionDays: CloudWatch Logs accepts only ${[...RETENTION_VALUES].sort((a, b) => a - b).join(', ')}; got ${retentionDays}`,
    );
  }

  const logLevelText = (p.string('logLevel') ?? d.logLevel).toUpperCase();
  let logLevel: LogLevel = 'INFO';
  if ((LOG_LEVELS as readonly string[]).includes(logLevelText)) logLevel = logLevelText as LogLevel;
  else p.problems.push(`logLevel: expected one of ${LOG_LEVELS.join(', ')}, got "${logLevelText}"`);

  const auxPublic = p.list(
    'auxPublic',
    isAuxPublicName,
    AUX_PUBLIC_NAMES.map((name) => `"${name}"`).join(' and/or '),
  ) as AuxPublicName[];

  const vpcId = p.string('vpcId', /^vpc-[0-9a-f]{8,17}$/, 'a VPC id (vpc-...)');
  const subnetIds = p.list(
    'vpcSubnetIds',
    (id) => /^subnet-[0-9a-f]{8,17}$/.test(id),
    'subnet ids (subnet-...)',
  );
  const securityGroupIds = p.list(
    'vpcSecurityGroupIds',
    (id) => /^sg-[0-9a-f]{8,17}$/.test(id),
    'security group ids (sg-...)',
  );
  let vpc: VpcAttachment | undefined;
  if (vpcId !== undefined) {
    if (subnetIds.length === 0)
      p.problems.push('vpcId is set but vpcSubnetIds is empty: list the private subnets');
    vpc = { vpcId, subnetIds, securityGroupIds };
  } else if (subnetIds.length > 0 || securityGroupIds.length > 0) {
    p.problems.push('vpcSubnetIds and vpcSecurityGroupIds need vpcId');
  }

  const domainName = p.string('domainName', HOST_NAME, 'a host name such as erp-proxy.example.com');
  const certificateArn = p.string('certificateArn', CERTIFICATE_ARN, 'an ACM certificate ARN');
  const hostedZoneId = p.string('hostedZoneId', /^Z[A-Z0-9]{1,31}$/, 'a Route 53 hosted zone id (Z...)');
  const hostedZoneName = p.string('hostedZoneName', HOST_NAME, 'the hosted zone domain, e.g. example.com');
  const disableExecuteApiEndpoint = p.boolean('disableExecuteApiEndpoint', false);
  let domain: CustomDomain | undefined;
  if (domainName !== undefined && certificateArn !== undefined) {
    if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
      p.problems.push('hostedZoneId and hostedZoneName go together');
    }
    domain = { domainName, certificateArn, hostedZoneId, hostedZoneName, disableExecuteApiEndpoint };
  } else if (domainName !== undefined || certificateArn !== undefined) {
    p.problems.push('domainName and certificateArn go together');
  } else if (hostedZoneId !== undefined || hostedZoneName !== undefined || disableExecuteApiEndpoint) {
    p.problems.push('hostedZoneId, hostedZoneName and disableExecuteApiEndpoint need domainName');
  }

  const arnHelp = 'the complete secret ARN, including the 6-character suffix Secrets Manager adds';
  const proxyKeysSecretArn = p.string('proxyKeysSecretArn', SECRET_ARN, arnHelp);
  const licenseSecretArn = p.string('licenseSecretArn', SECRET_ARN, arnHelp);
  const secretsKmsKeyArn = p.string(
    'secretsKmsKeyArn',
    KMS_KEY_ARN,
    'a KMS key ARN (arn:aws:kms:...:key/...)',
  );
  if (
    secretsKmsKeyArn !== undefined &&
    proxyKeysSecretArn === undefined &&
    licenseSecretArn === undefined &&
    // (an ARN that was given but is malformed is reported already)
    !p.problems.some((problem) => /^(proxyKeys|license)SecretArn:/.test(problem))
  ) {
    p.problems.push(
      'secretsKmsKeyArn applies to imported secrets only: set proxyKeysSecretArn and/or licenseSecretArn too ' +
        '(the secrets the stack creates use the default aws/secretsmanager key)',
    );
  }
  const config: StackConfig = {
    allowedTargets,
    allowedDatabases,
    defaultTimeoutSeconds,
    maxTimeoutSeconds,
    lambdaTimeoutSeconds,
    auxTimeoutSeconds,
    executeMemoryMb,
    auxMemoryMb,
    throttleRateLimit,
    throttleBurstLimit,
    reservedConcurrency,
    accountConcurrency,
    tags,
    logRetention,
    logLevel,
    stripDebug: p.boolean('stripDebug', d.stripDebug),
    maxResponseBytes: p.integer('maxResponseBytes', undefined, 1024, 6 * 1024 * 1024, ' bytes'),
    secretsMaxAgeSeconds: p.integer('secretsMaxAge', d.secretsMaxAge, 1, 86_400, ' seconds'),
    auxPublic,
    proxyKeysSecretArn,
    licenseSecretArn,
    secretsKmsKeyArn,
    secretsExtensionLayerArn: p.string(
      'secretsExtensionLayerArn',
      LAYER_VERSION_ARN,
      LAYER_VERSION_ARN_EXPECTED,
    ),
    licensePublicKey: p.string(
      'licensePublicKey',
      undefined,
      'an Ed25519 public key (base64 or PEM, from npm run license -- keygen)',
      (text) => parsePublicKey(text) !== undefined,
    ),
    vpc,
    domain,
    alarms: {
      email: p.string('alarmEmail', EMAIL, 'an e-mail address'),
      topicArn: p.string(
        'alarmTopicArn',
        SNS_TOPIC_ARN,
        'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)',
      ),
      serverErrorRatePercent: p.number('alarm5xxRatePercent', d.alarm5xxRatePercent, 0.1, 100),
      p99LatencyMs: p.integer('alarmP99LatencyMs', d.alarmP99LatencyMs, 100, 60_000, ' ms'),
      upstreamTimeouts: p.integer('alarmUpstreamTimeouts', d.alarmUpstreamTimeouts, 1, 1_000_000),
      licenseWarningDays: p.integer('licenseWarningDays', d.licenseWarningDays, 1, 365, ' days'),
    },
    buildCommit: p.string('buildCommit'),
    buildTime: p.string('buildTime'),
  };

  if (p.problems.length > 0) throw new StackConfigError(p.problems);
  return config;
}
