/**
 * @module stack-config
 * The deployment settings of the stack, read from CDK context (a settings file chosen with
 * `-c environment=<name>`, cdk.json or `-c key=value`) with the schemas of the settings catalogue
 * (lambdas/platform/settings.ts and lib/stack-settings.ts), and checked once, before any
 * construct is built. A bad value fails the synth with one message that names every bad key,
 * what was expected and what was given.
 *
 * Values passed with `-c` arrive as strings, values in cdk.json and settings files keep their
 * JSON type; the catalogue's schemas accept both (`"25"` and `25`, `"a,b"` and `["a","b"]`).
 */
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { AuditSealingMode, FunctionName } from '../lambdas/platform/names.ts';
import {
  type LogLevelName,
  parseSettings,
  RUNTIME_SETTINGS,
  type RuntimeSettingName,
  type RuntimeSettingValues,
  SETTING_RULES,
  type Setting,
  type SettingValue,
} from '../lambdas/platform/settings.ts';
import { MIN_ANSWER_MARGIN_SECONDS, STACK_SETTINGS } from './stack-settings.ts';

export {
  DEFAULT_ACCOUNT_CONCURRENCY,
  HTTP_API_INTEGRATION_TIMEOUT_SECONDS,
  MIN_ANSWER_MARGIN_SECONDS,
  MIN_AUX_TIMEOUT_SECONDS,
} from './stack-settings.ts';

/**
 * How many of an account's concurrent executions Lambda keeps unreserved: 100, or the whole
 * quota when it is 100 or less (new accounts start at 10). A deployment whose reservations would
 * leave fewer is refused by Lambda ("decreases account's UnreservedConcurrentExecution below its
 * minimum value").
 */
export function unreservedMinimum(accountConcurrency: number): number {
  return Math.min(100, accountConcurrency);
}

/** Reserved concurrency of each function (an upper bound on its concurrent executions). */
export type ReservedConcurrency = Readonly<Record<FunctionName, number>>;

/**
 * The audit sealer's reserved concurrency (docs/guide/audit.md, "Sealed"): one run at a time, so
 * that a run that overlaps the next schedule's is throttled, not doubled (the seal head's condition
 * would still keep the chain whole). Reserved with the other functions' reservations only: without
 * them (`reserveConcurrency=false`, a new account's quota) the sealer reserves nothing either.
 */
export const AUDIT_SEALER_CONCURRENCY = 1;

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
  /** Alarm when an operator's brake has been in force this many minutes. */
  readonly brakeAgeMinutes: number;
}

/** The runtime settings an operator deploys by context (those with a context key). */
type DeployableName = {
  [K in RuntimeSettingName]: (typeof RUNTIME_SETTINGS)[K] extends { readonly context: string } ? K : never;
}[RuntimeSettingName];

/** The deployed values of the runtime settings, defaults applied; the functions get them. */
export type DeployedSettings = { readonly [K in DeployableName]: RuntimeSettingValues[K] };

export type StackSettingValues = {
  readonly [K in keyof typeof STACK_SETTINGS]: SettingValue<(typeof STACK_SETTINGS)[K]>;
};

/** The audit's sealing as deployed (`auditSealing` not `off`). */
export interface AuditSealingConfig {
  /** The Object Lock mode of the bucket's default retention. */
  readonly mode: Exclude<AuditSealingMode, 'off'>;
  /** The windows' length, and the seal schedule's period (`auditSealMinutes`). */
  readonly sealMinutes: number;
  /** The Object Lock retention, days: `auditLockDays`, else `auditRetentionDays`. */
  readonly lockDays: number;
  /** The sealer's reserved concurrency ({@link AUDIT_SEALER_CONCURRENCY}); undefined with `reserveConcurrency=false`. */
  readonly sealerConcurrency: number | undefined;
}

/** The audit's sealing from the deployed settings; undefined with `auditSealing=off`. */
function auditSealingOf(settings: DeployedSettings, s: StackSettingValues): AuditSealingConfig | undefined {
  const { auditSealing: mode, auditSealMinutes: sealMinutes } = settings;
  if (mode === 'off') return undefined;
  // The catalogue's schema has a default (5); its type does not say so.
  if (sealMinutes === undefined) throw new Error('auditSealMinutes has no value');
  return {
    mode,
    sealMinutes,
    lockDays: settings.auditLockDays ?? settings.auditRetentionDays,
    sealerConcurrency: s.reserveConcurrency ? AUDIT_SEALER_CONCURRENCY : undefined,
  };
}

/** Everything the stack needs to know, with defaults applied. */
export interface StackConfig {
  /** The runtime settings deployed to the functions (each to the functions that read it). */
  readonly settings: DeployedSettings;
  readonly stackName: string;
  /** A production synth (`production`): see docs/deployment.md, "Settings files". */
  readonly production: boolean;
  /** Timeout of the execute and version functions, seconds. */
  readonly lambdaTimeoutSeconds: number;
  /** Timeout of the aux function, seconds. */
  readonly auxTimeoutSeconds: number;
  /** Memory of execute-v1 and execute-v2, MB. */
  readonly executeMemoryMb: number;
  /** Memory of version and aux, MB. */
  readonly versionAndAuxMemoryMb: number;
  /** Memory of mcp, MB. */
  readonly mcpMemoryMb: number;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** Reserved concurrency per function; undefined with `reserveConcurrency=false`. */
  readonly reservedConcurrency: ReservedConcurrency | undefined;
  /** The audit's sealing (docs/guide/audit.md, "Sealed"); undefined with `auditSealing=off`. */
  readonly auditSealing: AuditSealingConfig | undefined;
  /** The account's concurrent-executions quota in the region, which the reservations must fit. */
  readonly accountConcurrency: number;
  /** Tags for every resource of the stack (besides `service`). */
  readonly tags: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  /** Existing proxy-keys secret (complete ARN). Undefined: the stack generates one. */
  readonly proxyKeysSecretArn: string | undefined;
  /** Existing license secret (complete ARN). Undefined: the stack creates a placeholder. */
  readonly licenseSecretArn: string | undefined;
  /** Existing OAuth identity-map secret (complete ARN). Undefined: created when OAuth is on. */
  readonly mcpOauthIdentitiesSecretArn: string | undefined;
  /**
   * The customer-managed KMS key that encrypts the imported secrets, when it is not the account's
   * default `aws/secretsmanager` key: the functions then need `kms:Decrypt` on it (through
   * Secrets Manager only) to read them.
   */
  readonly secretsKmsKeyArn: string | undefined;
  /** Overrides the pinned extension layer (lib/secrets-extension-layers.ts) on every function. */
  readonly secretsExtensionLayerArn: string | undefined;
  readonly vpc: VpcAttachment | undefined;
  readonly domain: CustomDomain | undefined;
  readonly alarms: AlarmSettings;
}

/** The context keys of one half of the catalogue. */
function contextKeysOf(catalogue: Readonly<Record<string, Setting>>): string[] {
  return Object.values(catalogue).flatMap((setting) =>
    setting.context === undefined ? [] : [setting.context],
  );
}

/**
 * Every context key the CDK app reads, from the catalogue: the deployable runtime settings, then
 * the stack's own. docs/deployment.md's "Context parameters" table is generated from the same
 * entries (`npm run docs:settings`).
 */
export const CONTEXT_KEYS: readonly string[] = Object.freeze([
  ...contextKeysOf(RUNTIME_SETTINGS),
  ...contextKeysOf(STACK_SETTINGS),
]);

/** A context key of {@link CONTEXT_KEYS}. */
export type ContextKey = string;

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

/**
 * Default reserved concurrency, sized from the stage throttle and the Lambda timeout.
 *
 * - Each execute function: the stage's burst limit, capped at the rate limit times the Lambda
 *   timeout (more could never be used: Little's law, concurrency = rate x duration). At the
 *   defaults that is 200 for each of execute-v1 and execute-v2: the full 100 requests/s while
 *   calls average up to 2 s, and a slow ERP (every call waiting the 25 s maxTimeout) holds at
 *   most 200 executions of each, 400 for the two, instead of 2,500.
 * - version: a tenth of the execute reservation (`executeConcurrency` when set), at least 5 (one
 *   short call per session, not per request).
 * - aux: 10 (`auxConcurrency`'s default): /_/about and /_/license answer in milliseconds, and
 *   /_/metrics is cached for 60 s.
 * - mcp: a tenth of execute too, at least 5: an agent makes one tool call at a time, and a slow
 *   ERP must not let agents take the concurrency the execute callers need.
 *
 * The five together reserve 200 + 200 + 20 + 10 + 20 = 450 by default, and the audit sealer 1 more
 * ({@link AUDIT_SEALER_CONCURRENCY}) while sealing is on.
 */
export function defaultReservedConcurrency(settings: {
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  readonly lambdaTimeoutSeconds: number;
  /** `executeConcurrency` when set: version's and mcp's tenth is of the execute reservation made. */
  readonly executeConcurrency?: number | undefined;
}): { readonly execute: number; readonly version: number; readonly mcp: number } {
  const execute =
    settings.executeConcurrency ??
    Math.max(
      1,
      Math.min(
        settings.throttleBurstLimit,
        Math.ceil(settings.throttleRateLimit * settings.lambdaTimeoutSeconds),
      ),
    );
  const tenth = Math.max(5, Math.ceil(execute / 10));
  return { execute, version: tenth, mcp: tenth };
}

/**
 * Why the reservations cannot be deployed to an account with this quota, in words an operator
 * can act on, or undefined when they fit.
 */
export function reservationProblem(
  reserved: ReservedConcurrency,
  accountConcurrency: number,
  auditSealer?: number,
): string | undefined {
  const total = Object.values(reserved).reduce((sum, n) => sum + n, 0) + (auditSealer ?? 0);
  const floor = unreservedMinimum(accountConcurrency);
  if (total <= accountConcurrency - floor) return undefined;
  const functions = Object.keys(reserved).length + (auditSealer === undefined ? 0 : 1);
  const sealer = auditSealer === undefined ? '' : `, audit-sealer ${auditSealer}`;
  const detail =
    `the ${functions === 5 ? 'five' : 'six'} functions reserve ${total} concurrent executions (execute-v1 ${reserved['execute-v1']}, ` +
    `execute-v2 ${reserved['execute-v2']}, version ${reserved.version}, aux ${reserved.aux}, mcp ${reserved.mcp}${sealer}), ` +
    'and Lambda keeps ' +
    `${floor} of the account's ${accountConcurrency} unreserved`;
  const deployWithout =
    'or deploy without reservations (reserveConcurrency=false; docs/deployment.md, Concurrency)';
  // Every function needs at least 1, and Lambda keeps 100 of a quota above 100 (all of one below).
  if (accountConcurrency - floor < functions) {
    return (
      `reserved concurrency: ${detail}, so this account cannot reserve any. A quota increase is needed: ask for at ` +
      `least ${total + 100} "Concurrent executions" (Service Quotas, AWS Lambda) and set accountConcurrency to the ` +
      `new quota, ${deployWithout}`
    );
  }
  return (
    `reserved concurrency: ${detail}, so at most ${accountConcurrency - floor} can be reserved. Ask for a quota ` +
    `increase to at least ${total + 100} (Service Quotas, AWS Lambda, "Concurrent executions") and set ` +
    `accountConcurrency to it; or lower executeConcurrency/versionConcurrency/auxConcurrency/mcpConcurrency (or the throttle ` +
    `they default from); ${deployWithout}`
  );
}

/** The value of a `RetentionDays` member: the same number of days (checked against the enum in tests). */
function retention(days: number): RetentionDays {
  return days as RetentionDays;
}

/** The context keys a runtime setting is given with (its context key, or its variable's name). */
function runtimeKeyOf(key: RuntimeSettingName): string {
  return (RUNTIME_SETTINGS[key] as Setting).context ?? RUNTIME_SETTINGS[key].env;
}

/**
 * The reservations (`reserveConcurrency`), with what is wrong with them; `auditSealer` is the
 * sealer's ({@link AUDIT_SEALER_CONCURRENCY}, or undefined), which the account's quota must fit too.
 */
function reservationsOf(
  s: StackSettingValues,
  auditSealer: number | undefined,
  read: ContextReader,
  problems: string[],
): ReservedConcurrency | undefined {
  if (!s.reserveConcurrency) {
    if (
      s.executeConcurrency !== undefined ||
      s.versionConcurrency !== undefined ||
      s.mcpConcurrency !== undefined ||
      read('auxConcurrency') !== undefined
    ) {
      problems.push(
        'executeConcurrency, versionConcurrency, auxConcurrency and mcpConcurrency need reserveConcurrency=true',
      );
    }
    return undefined;
  }
  const sized = defaultReservedConcurrency(s);
  const reserved: ReservedConcurrency = {
    'execute-v1': sized.execute,
    'execute-v2': sized.execute,
    version: s.versionConcurrency ?? sized.version,
    aux: s.auxConcurrency,
    mcp: s.mcpConcurrency ?? sized.mcp,
  };
  const problem = reservationProblem(reserved, s.accountConcurrency, auditSealer);
  if (problem !== undefined) problems.push(problem);
  return reserved;
}

/** The VPC attachment (`vpcId` and its subnets and security groups). */
function vpcOf(s: StackSettingValues, problems: string[]): VpcAttachment | undefined {
  if (s.vpcId !== undefined) {
    if (s.vpcSubnetIds.length === 0)
      problems.push('vpcId is set but vpcSubnetIds is empty: list the private subnets');
    return { vpcId: s.vpcId, subnetIds: s.vpcSubnetIds, securityGroupIds: s.vpcSecurityGroupIds };
  }
  if (s.vpcSubnetIds.length > 0 || s.vpcSecurityGroupIds.length > 0) {
    problems.push('vpcSubnetIds and vpcSecurityGroupIds need vpcId');
  }
  return undefined;
}

/** The custom domain (`domainName` with its certificate and hosted zone). */
function domainOf(s: StackSettingValues, problems: string[]): CustomDomain | undefined {
  const { domainName, certificateArn, hostedZoneId, hostedZoneName, disableExecuteApiEndpoint } = s;
  if (domainName !== undefined && certificateArn !== undefined) {
    if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
      problems.push('hostedZoneId and hostedZoneName go together');
    }
    return { domainName, certificateArn, hostedZoneId, hostedZoneName, disableExecuteApiEndpoint };
  }
  if (domainName !== undefined || certificateArn !== undefined) {
    problems.push('domainName and certificateArn go together');
  } else if (hostedZoneId !== undefined || hostedZoneName !== undefined || disableExecuteApiEndpoint) {
    problems.push('hostedZoneId, hostedZoneName and disableExecuteApiEndpoint need domainName');
  }
  return undefined;
}

/** What the secrets' settings and a production synth require of each other. */
function secretProblems(settings: DeployedSettings, s: StackSettingValues): string[] {
  const problems: string[] = [];
  if (
    s.secretsKmsKeyArn !== undefined &&
    s.proxyKeysSecretArn === undefined &&
    s.licenseSecretArn === undefined
  ) {
    problems.push(
      'secretsKmsKeyArn applies to imported secrets only: set proxyKeysSecretArn and/or licenseSecretArn too ' +
        '(the secrets the stack creates use the default aws/secretsmanager key)',
    );
  }
  if (!s.production) {
    if (s.acceptUnsignedLicenses)
      problems.push('acceptUnsignedLicenses applies to a production synth only (production: true)');
    return problems;
  }
  if (settings.licensePublicKey === undefined && !s.acceptUnsignedLicenses) {
    problems.push(
      'production: licensePublicKey is not set, so any license document would be accepted. Set it (the public key ' +
        'printed by npm run license -- keygen), or, to accept unsigned licenses knowingly, set acceptUnsignedLicenses: true',
    );
  }
  const missing = (['proxyKeysSecretArn', 'licenseSecretArn'] as const).filter((key) => s[key] === undefined);
  if (missing.length > 0) {
    problems.push(
      `production: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set. A production stack never ` +
        'creates its secrets: a deploy that created new ones would lock every caller out (401) and refuse every call ' +
        '(403). Create them and give their ARNs (docs/deployment.md, "Secrets")',
    );
  }
  return problems;
}

/**
 * The stack's configuration from the parsed values of both halves of the catalogue (`read` is the
 * context, for what a parsed default cannot tell). Throws {@link StackConfigError} listing every
 * problem. Exported for the test that checks it reads every stack-only setting.
 */
export function stackConfigOf(
  settings: DeployedSettings,
  s: StackSettingValues,
  read: ContextReader,
): StackConfig {
  const problems: string[] = [];
  for (const rule of SETTING_RULES) {
    const problem = rule(settings, runtimeKeyOf);
    if (problem !== undefined) problems.push(problem);
  }
  if (settings.maxTimeoutSeconds + MIN_ANSWER_MARGIN_SECONDS > s.lambdaTimeoutSeconds) {
    problems.push(
      `maxTimeout (${settings.maxTimeoutSeconds}) must be at least ${MIN_ANSWER_MARGIN_SECONDS} s below lambdaTimeout ` +
        `(${s.lambdaTimeoutSeconds}), so the proxy answers -32003 before Lambda or API Gateway cut the request off`,
    );
  }
  const auditSealing = auditSealingOf(settings, s);
  const reservedConcurrency = reservationsOf(s, auditSealing?.sealerConcurrency, read, problems);
  const vpc = vpcOf(s, problems);
  const domain = domainOf(s, problems);
  problems.push(...secretProblems(settings, s));
  if (problems.length > 0) throw new StackConfigError(problems);
  return {
    settings,
    stackName: s.stackName,
    production: s.production,
    lambdaTimeoutSeconds: s.lambdaTimeoutSeconds,
    auxTimeoutSeconds: s.auxTimeoutSeconds,
    executeMemoryMb: s.executeMemoryMb,
    versionAndAuxMemoryMb: s.versionAndAuxMemoryMb,
    mcpMemoryMb: s.mcpMemoryMb,
    throttleRateLimit: s.throttleRateLimit,
    throttleBurstLimit: s.throttleBurstLimit,
    reservedConcurrency,
    auditSealing,
    accountConcurrency: s.accountConcurrency,
    tags: s.tags,
    logRetention: retention(s.logRetentionDays),
    logLevel: settings.logLevel,
    proxyKeysSecretArn: s.proxyKeysSecretArn,
    licenseSecretArn: s.licenseSecretArn,
    mcpOauthIdentitiesSecretArn: s.mcpOauthIdentitiesSecretArn,
    secretsKmsKeyArn: s.secretsKmsKeyArn,
    secretsExtensionLayerArn: s.secretsExtensionLayerArn,
    vpc,
    domain,
    alarms: {
      email: s.alarmEmail,
      topicArn: s.alarmTopicArn,
      serverErrorRatePercent: s.alarm5xxRatePercent,
      p99LatencyMs: s.alarmP99LatencyMs,
      upstreamTimeouts: s.alarmUpstreamTimeouts,
      licenseWarningDays: settings.licenseWarningDays,
      brakeAgeMinutes: s.alarmBrakeAgeMinutes,
    },
  };
}

/**
 * Reads and checks the stack settings.
 *
 * @example
 * const config = parseStackConfig((key) => app.node.tryGetContext(key));
 */
export function parseStackConfig(read: ContextReader): StackConfig {
  const runtime = parseSettings(RUNTIME_SETTINGS, 'context', read);
  const stack = parseSettings(STACK_SETTINGS, 'context', read);
  const problems = [...runtime.problems, ...stack.problems];
  if (problems.length > 0) throw new StackConfigError(problems);
  return stackConfigOf(runtime.values as DeployedSettings, stack.values as StackSettingValues, read);
}
