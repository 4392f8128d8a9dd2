/**
 * @module erp-proxy-stack
 * The erp-proxy deployment: an HTTP API (payload format 2.0) whose routes come from the shared
 * route table, five Lambda functions (the four of the specification's routes, and mcp for
 * `POST /mcp`), the secrets, the state and audit tables, the audit's sealing (a scheduled sealer,
 * its signing key and its Object Lock bucket, unless `auditSealing` is `off`), access logs, alarms
 * and a dashboard.
 */
import { fileURLToPath } from 'node:url';
import {
  CfnOutput,
  type CfnResource,
  type CustomResourceProviderBase,
  Duration,
  Fn,
  RemovalPolicy,
  SecretValue,
  Stack,
  type StackProps,
} from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  DomainName,
  HttpApi,
  HttpMethod,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { type ISecurityGroup, SecurityGroup, Subnet, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  Effect,
  PolicyDocument,
  PolicyStatement,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayv2DomainProperties } from 'aws-cdk-lib/aws-route53-targets';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectLockRetention } from 'aws-cdk-lib/aws-s3';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Trigger } from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import {
  AUDIT_READ_OPERATIONS,
  AUDIT_SEALER_OPERATIONS,
  AUDIT_TABLE,
  AUDIT_WRITE_OPERATIONS,
  AUDIT_WRITER_LEADING_KEYS,
} from '../lambdas/platform/audit/audit-record.ts';
import {
  BRAKES_ITEM_KEY,
  BRAKES_READ_OPERATIONS,
  BRAKES_WRITE_OPERATIONS,
} from '../lambdas/platform/brakes/brakes-item.ts';
import { FUNCTION_NAMES, type FunctionName, SERVICE_NAME } from '../lambdas/platform/names.ts';
import { HANDLER_ENTRIES, ROUTES, type Route, routeKey } from '../lambdas/platform/routes.ts';
import {
  AUDIT_SEAL_EVENT,
  AUDIT_VERIFY_EVENT,
  AUDIT_VERIFY_HOURS,
  BRAKES_AGE_EVENT,
  BRAKES_AGE_INTERVAL_MINUTES,
  LICENSE_CHECK_EVENT,
  LICENSE_CHECK_INTERVAL_HOURS,
} from '../lambdas/platform/scheduled-jobs.ts';
import { RUNTIME_SETTINGS, STATEFUL_FUNCTIONS } from '../lambdas/platform/settings.ts';
import {
  PARTITION_KEY,
  STORE_KEY_PREFIX,
  STORE_OPERATIONS,
  TTL_ATTRIBUTE,
} from '../lambdas/platform/state/state-store.ts';
import { functionEnvironment, type StackSetValues } from './function-environment.ts';
import { Monitoring } from './monitoring.ts';
import { acknowledge } from './nag.ts';
import {
  FUNCTION_ARCHITECTURE,
  FUNCTION_VENDORED,
  type FunctionVpcPlacement,
  KEPT_UNLESS_CREATE_FAILS,
  ProxyFunction,
} from './proxy-function.ts';
import {
  type AuditSealingConfig,
  HTTP_API_INTEGRATION_TIMEOUT_SECONDS,
  type StackConfig,
} from './stack-config.ts';

/** The project root: HANDLER_ENTRIES are relative to it, and it holds package-lock.json. */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** The deploy's state table check: its handler, relative to the project root. */
export const STATE_TABLE_CHECK_ENTRY = 'lambdas/handlers/state-table-check.ts';

/**
 * The stateful function whose role the deploy's state table check runs with: each function has
 * a role of its own, and the stateful ones are granted the same operations on the table.
 */
export const STATE_TABLE_CHECK_ROLE_OF: FunctionName = 'execute-v1';

/**
 * The functions that write audit records (a call that can write passes through them), with
 * `PutItem` and `UpdateItem` on the audit table and a read of its digest secret; and the one that
 * reads them (`GET /_/audit`), with `Query`, `GetItem` and `BatchGetItem`. No other function
 * reaches the table.
 */
export const AUDIT_WRITERS: readonly FunctionName[] = STATEFUL_FUNCTIONS;
export const AUDIT_READER: FunctionName = 'aux';

/**
 * The operators' brakes (docs/operators.md, "Stop an agent now"): one item of the state table,
 * `BRAKES_ITEM_KEY`, read (`BRAKES_READ_OPERATIONS`) by every function that serves calls, and
 * written (`BRAKES_WRITE_OPERATIONS`) by the aux function alone (`POST /_/brakes`). The grants name
 * that item by its partition key (`dynamodb:LeadingKeys`): {@link BRAKES_ITEM_CONDITION}.
 */
export const BRAKES_READERS: readonly FunctionName[] = FUNCTION_NAMES;
export const BRAKES_WRITER: FunctionName = 'aux';

/** The brakes item alone: every key of the request is `BRAKES_ITEM_KEY`. */
export const BRAKES_ITEM_CONDITION = Object.freeze({
  'ForAllValues:StringEquals': Object.freeze({ 'dynamodb:LeadingKeys': Object.freeze([BRAKES_ITEM_KEY]) }),
});

/**
 * The stateful functions' store grant (`STORE_OPERATIONS` on the whole table) may write any item
 * but the brakes' (every key under `brakes#`, the brakes item's prefix, reserved for them): an
 * execute or mcp function, whatever its code does, cannot set, change or release a brake.
 */
export const STORE_WRITE_CONDITION = Object.freeze({
  'ForAllValues:StringNotLike': Object.freeze({
    'dynamodb:LeadingKeys': Object.freeze([`${STORE_KEY_PREFIX.brakes}*`]),
  }),
});

/**
 * Seconds after the writing functions' Lambda timeout (`lambdaTimeout`) before a record still
 * `pending` reads `unknown` (`AUDIT_PENDING_AFTER` on the aux function). The same margin as the
 * runtime's local default (`PENDING_MARGIN_SECONDS` of lambdas/platform/function-timeout.ts, which
 * the stack may not import: test/infra/audit-table.test.ts holds the two equal).
 */
export const AUDIT_PENDING_MARGIN_SECONDS = 30;

/** The audit sealer's handler, relative to the project root (no route reaches it). */
export const AUDIT_SEALER_ENTRY = 'lambdas/handlers/audit-sealer.ts';

/**
 * The audit sealer's size: memory for a window's records and their canonical JSON, and a timeout
 * that bounds a run (a catch-up after an outage seals a bounded number of windows per run, the
 * next schedule goes on).
 */
export const AUDIT_SEALER_MEMORY_MB = 512;
export const AUDIT_SEALER_TIMEOUT_SECONDS = 300;

/**
 * Construct ids of the audit's sealing (docs/guide/audit.md, "Sealed"). A new id for the bucket or
 * the key would be a new bucket (its Object Lock chosen again) or a new key (a new public key for
 * the auditors to pin).
 */
export const AUDIT_SEALING_IDS = Object.freeze({
  bucket: 'AuditSealBucket',
  key: 'AuditSealKey',
  sealer: 'AuditSealer',
  sealSchedule: 'AuditSealSchedule',
  verifySchedule: 'AuditVerifySchedule',
});

/**
 * The sealer's actions on the bucket: write a window's objects (each with its own retention), read
 * them back, their versions and retention (the daily verification), and list keys and versions.
 */
export const AUDIT_SEALER_OBJECT_ACTIONS = Object.freeze([
  's3:PutObject',
  's3:PutObjectRetention',
  's3:GetObject',
  's3:GetObjectVersion',
  's3:GetObjectRetention',
] as const);
export const AUDIT_SEALER_BUCKET_ACTIONS = Object.freeze(['s3:ListBucket', 's3:ListBucketVersions'] as const);

/** The object writes the bucket policy refuses to every principal but the sealer's role. */
export const AUDIT_BUCKET_GUARDED_WRITES = Object.freeze([
  's3:PutObject',
  's3:PutObjectRetention',
  's3:DeleteObject*',
] as const);

/**
 * The signing key's policy: the account (its administrators, through IAM) administers the key, and
 * may change this policy (a change CloudTrail records), but is not granted `kms:Sign`; the sealer's
 * role alone signs, and reads the public key it publishes into the bucket.
 */
export const AUDIT_SEAL_KEY_ADMIN_ACTIONS = Object.freeze([
  // Not kms:Create*: kms:CreateGrant would let an administrator grant kms:Sign without a policy change.
  'kms:CreateAlias',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
] as const);
export const AUDIT_SEALER_KEY_ACTIONS = Object.freeze(['kms:Sign', 'kms:GetPublicKey'] as const);

/** What the stack builds for the audit's sealing (`auditSealing` not `off`). */
export interface AuditSealing {
  /** The sealed windows: Object Lock, versioned, private, TLS only, kept when the stack goes. */
  readonly bucket: Bucket;
  /** The asymmetric key (`ECC_NIST_P256`) that signs the seals; only the sealer may sign. */
  readonly key: Key;
  /** The scheduled sealer (no route reaches it). */
  readonly sealer: ProxyFunction;
  /** Every `auditSealMinutes` minutes: seal the closed windows. */
  readonly sealSchedule: Rule;
  /** Once a day: verify the last day's windows. */
  readonly verifySchedule: Rule;
}

/**
 * Seconds after the writing functions' Lambda timeout and {@link AUDIT_PENDING_MARGIN_SECONDS}
 * before a record still `pending` reads `unknown` (aux) and may be completed as such (the sealer):
 * the writing functions' timeout, not aux's own.
 */
export function auditPendingAfterSeconds(config: StackConfig): number {
  return config.lambdaTimeoutSeconds + AUDIT_PENDING_MARGIN_SECONDS;
}

/** The construct id CDK gives its trigger provider (one per stack), a child of the stack. */
const TRIGGER_PROVIDER_ID = 'AWSCDK.TriggerCustomResourceProviderCustomResourceProvider';

/** Construct ids of the functions. */
export const FUNCTION_IDS: Readonly<Record<FunctionName, string>> = Object.freeze({
  'execute-v1': 'ExecuteV1',
  'execute-v2': 'ExecuteV2',
  version: 'Version',
  aux: 'Aux',
  mcp: 'Mcp',
});

const FUNCTION_DESCRIPTIONS: Readonly<Record<FunctionName, string>> = Object.freeze({
  'execute-v1': 'erp-proxy v1 execute: execute_kw over the ERP /jsonrpc endpoint',
  'execute-v2': 'erp-proxy v2 execute: JSON-2 (/json/2/<model>/<method>), ERP 19+',
  version: 'erp-proxy version: ERP version of a target (v1 and v2 routes)',
  aux: 'erp-proxy aux: /_/about, /_/license, /_/metrics, /_/audit, /_/brakes, the hourly license check and the 5-minute brakes report',
  mcp: 'erp-proxy mcp: POST /mcp, MCP tools for agents (ERP 16-22)',
});

/**
 * One JSON object per request in the access log. Values are quoted so a missing value
 * (API Gateway writes `-`) cannot break the JSON. Never the body, never a header value.
 */
const ACCESS_LOG_FIELDS = Object.freeze({
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTime',
  requestTimeEpoch: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  path: '$context.path',
  protocol: '$context.protocol',
  domainName: '$context.domainName',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
});

const HTTP_METHODS = Object.freeze({ GET: HttpMethod.GET, POST: HttpMethod.POST, DELETE: HttpMethod.DELETE });

/** Why each route has no API Gateway authorizer (cdk-nag AwsSolutions-APIG4). */
const ROUTE_AUTH_REASONS: Readonly<Record<Route['auth'], string>> = Object.freeze({
  'api-key':
    'Authenticated in the function: x-api-key (on /mcp also Authorization: Bearer) is compared in constant time with the keys ' +
    'in the proxy-keys secret, and a failure is answered with the JSON-RPC envelope (-32000) the README documents, which a ' +
    'gateway authorizer cannot produce.',
  public:
    'Public by design, returning no data: /_/about describes the service (README, Operators), and the OAuth protected ' +
    'resource metadata tells a connector where to sign in before it has a token (README, Remote agents with OAuth; RFC 9728).',
  'aux-configurable':
    'Authenticated in the function with x-api-key (same keys as the execute routes) unless the operator lists the endpoint ' +
    'in AUX_PUBLIC (context auxPublic); a gateway authorizer cannot make that choice at run time.',
});

/**
 * What makes each created secret's value, frozen. CloudFormation writes a new value into an
 * existing secret when this part of its definition changes (a new `GenerateSecretString` issues
 * new keys, a new `SecretString` overwrites the license the operator put); a change of
 * description, tags or anything else updates the secret in place and keeps its value. So these
 * never change (test/infra/erp-proxy-stack.test.ts pins them, and the logical ids, which
 * would replace the secret).
 */
export const SECRET_VALUE_SOURCES = Object.freeze({
  proxyKeys: Object.freeze({ passwordLength: 48, excludePunctuation: true, includeSpace: false }),
  license: '{}',
  oauthIdentities: '{"identities":[]}',
  auditDigest: Object.freeze({ passwordLength: 64, excludePunctuation: true, includeSpace: false }),
});

/** Construct ids of the created secrets; a new id would be a new secret, with a new value. */
export const SECRET_IDS = Object.freeze({
  proxyKeys: 'ProxyKeysSecret',
  license: 'LicenseSecret',
  oauthIdentities: 'OAuthIdentitiesSecret',
  auditDigest: 'AuditDigestSecret',
});

export interface ErpProxyStackProps extends StackProps {
  readonly config: StackConfig;
}

export class ErpProxyStack extends Stack {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly functions: Readonly<Record<FunctionName, ProxyFunction>>;
  readonly proxyKeysSecret: ISecret;
  readonly licenseSecret: ISecret;
  /** The OAuth identity map's secret (`mcpOauthIssuers` set); `undefined` while OAuth is off. */
  readonly oauthIdentitiesSecret: ISecret | undefined;
  /**
   * The proxy's state (idempotency records, limit counters, the operators' brakes): docs/design.md,
   * "The proxy's state: the store".
   */
  readonly stateTable: Table;
  /** The audit records (docs/guide/audit.md): written by execute and mcp, read by aux. */
  readonly auditTable: Table;
  /** The key of the audit's HMACs (`AUDIT_DIGEST_SECRET_ID`), generated by the stack. */
  readonly auditDigestSecret: ISecret;
  readonly accessLogs: LogGroup;
  readonly monitoring: Monitoring;
  readonly alarmTopic: ITopic;
  /** The EventBridge rule that runs the aux function's license check every hour. */
  readonly licenseCheckSchedule: Rule;
  /** The EventBridge rule that runs the aux function's brakes report every 5 minutes. */
  readonly brakesAgeSchedule: Rule;
  /** The audit's sealing (docs/guide/audit.md, "Sealed"); `undefined` with `auditSealing=off`. */
  readonly auditSealing: AuditSealing | undefined;
  /** The deploy's check that the functions' role can write the state table, and its function. */
  readonly stateTableCheck: { readonly trigger: Trigger; readonly function: ProxyFunction };

  constructor(scope: Construct, id: string, props: ErpProxyStackProps) {
    // Stack tags: CloudFormation puts them on every resource of the stack that takes tags.
    super(scope, id, { ...props, tags: { ...props.config.tags, ...props.tags, service: SERVICE_NAME } });
    const { config } = props;

    this.proxyKeysSecret = this.createProxyKeysSecret(config);
    this.licenseSecret = this.createLicenseSecret(config);
    this.oauthIdentitiesSecret = this.createOAuthIdentitiesSecret(config);
    this.stateTable = this.createStateTable();
    this.auditTable = this.createAuditTable();
    this.auditDigestSecret = this.createAuditDigestSecret();
    this.functions = this.createFunctions(config);
    this.grantSecrets(config);
    this.grantStateTable();
    this.grantAuditTable();
    this.stateTableCheck = this.checkStateTableAtDeploy(config);
    this.licenseCheckSchedule = this.scheduleLicenseCheck();
    this.brakesAgeSchedule = this.scheduleBrakesAge();
    this.auditSealing = this.createAuditSealing(config);

    const domain = this.customDomain(config);
    const gateway = this.createApi(id, config, domain);
    this.api = gateway.api;
    this.accessLogs = gateway.accessLogs;
    this.stage = gateway.stage;
    this.addRoutes();
    this.setOAuthAudience(config, domain);

    this.alarmTopic = this.createAlarmTopic(config);
    this.monitoring = new Monitoring(this, 'Monitoring', {
      api: this.api,
      functions: {
        'execute-v1': this.functions['execute-v1'].function,
        'execute-v2': this.functions['execute-v2'].function,
        version: this.functions.version.function,
        aux: this.functions.aux.function,
        mcp: this.functions.mcp.function,
      },
      reservedConcurrency: config.reservedConcurrency,
      alarms: config.alarms,
      dashboardName: `${this.stackName}-${SERVICE_NAME}`,
      topic: this.alarmTopic,
      targetLimits: config.settings.targetLimits,
      stateTable: this.stateTable,
      auditSealing: this.auditSealing &&
        config.auditSealing && {
          sealer: this.auditSealing.sealer.function,
          sealMinutes: config.auditSealing.sealMinutes,
          pendingAfterSeconds: auditPendingAfterSeconds(config),
        },
    });

    this.addOutputs(config, domain);
  }

  /** The values the stack sets in the functions' environments, from what it builds. */
  private stackSetValues(config: StackConfig): StackSetValues {
    return {
      proxyKeysSecretId: this.proxyKeysSecret.secretArn,
      licenseSecretId: this.licenseSecret.secretArn,
      powertoolsLogLevel: config.logLevel,
      mcpOauthIdentitiesSecretId: this.oauthIdentitiesSecret?.secretArn,
      stateTable: this.stateTable.tableName,
      auditTable: this.auditTable.tableName,
      auditDigestSecretId: this.auditDigestSecret.secretArn,
      auditPendingAfterSeconds: String(auditPendingAfterSeconds(config)),
    };
  }

  /** The five functions, each with only the settings it reads. */
  private createFunctions(config: StackConfig): Readonly<Record<FunctionName, ProxyFunction>> {
    const vpc = this.vpcPlacement(config);
    const stackSet = this.stackSetValues(config);

    const make = (name: FunctionName, memoryMb: number, timeoutSeconds: number) =>
      new ProxyFunction(this, FUNCTION_IDS[name], {
        description: FUNCTION_DESCRIPTIONS[name],
        entry: `${PROJECT_ROOT}/${HANDLER_ENTRIES[name]}`,
        projectRoot: PROJECT_ROOT,
        memoryMb,
        timeoutSeconds,
        // Only the settings this function reads (the settings catalogue says which).
        environment: functionEnvironment(name, config.settings, stackSet),
        logRetention: config.logRetention,
        reservedConcurrency: config.reservedConcurrency?.[name],
        ...(FUNCTION_VENDORED[name] ? { vendored: FUNCTION_VENDORED[name] } : {}),
        ...(vpc ? { vpc } : {}),
        secretsExtensionLayerArn: config.secretsExtensionLayerArn,
      });
    return Object.freeze({
      'execute-v1': make('execute-v1', config.executeMemoryMb, config.lambdaTimeoutSeconds),
      'execute-v2': make('execute-v2', config.executeMemoryMb, config.lambdaTimeoutSeconds),
      version: make('version', config.versionAndAuxMemoryMb, config.lambdaTimeoutSeconds),
      aux: make('aux', config.versionAndAuxMemoryMb, config.auxTimeoutSeconds),
      mcp: make('mcp', config.mcpMemoryMb, config.lambdaTimeoutSeconds),
    });
  }

  /** The secrets every function reads, and the aux function's CloudWatch read. */
  private grantSecrets(config: StackConfig): void {
    // Every function checks x-api-key and the license (aux for /_/license), so each reads both
    // secrets and nothing else.
    for (const fn of Object.values(this.functions)) {
      this.proxyKeysSecret.grantRead(fn.function);
      this.licenseSecret.grantRead(fn.function);
      // Imported secrets under a customer-managed key: decrypt through Secrets Manager only. (An
      // imported key's policy cannot be changed, so `grantRead` with an `encryptionKey` adds
      // nothing; the key policy must delegate to IAM, as the default key policy does.)
      if (config.secretsKmsKeyArn) {
        fn.function.addToRolePolicy(
          new PolicyStatement({
            sid: 'DecryptImportedSecrets',
            actions: ['kms:Decrypt'],
            resources: [config.secretsKmsKeyArn],
            conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${this.region}.amazonaws.com` } },
          }),
        );
      }
    }
    // The identity map (OAuth on) holds ERP keys: only the mcp function reads it.
    this.oauthIdentitiesSecret?.grantRead(this.functions.mcp.function);
    const aux = this.functions.aux;
    aux.function.addToRolePolicy(
      new PolicyStatement({
        sid: 'ReadServiceMetrics',
        actions: ['cloudwatch:GetMetricData'],
        resources: ['*'],
      }),
    );
    acknowledge(
      aux.role.node.findChild('DefaultPolicy'),
      'AwsSolutions-IAM5[Resource::*]',
      'cloudwatch:GetMetricData supports no resource-level permissions and no condition keys, so its resource must be "*". ' +
        'Only the aux function (GET /_/metrics) has it; it reads metrics, nothing else.',
    );
  }

  /**
   * The one table of the proxy's state: on demand (the functions' traffic decides the cost, nothing
   * is provisioned), TTL on the records' expiry attribute (DynamoDB deletes expired items for free,
   * eventually; the store's conditions ignore them meanwhile), encrypted at rest with the AWS
   * managed key. Kept on a stack delete or replacement, as the secrets are: its records are what
   * stops a retried write from running twice within `IDEMPOTENCY_TTL`.
   */
  private createStateTable(): Table {
    const table = new Table(this, 'StateTable', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    acknowledge(
      table,
      'AwsSolutions-DDB3',
      'The table holds short-lived state only (idempotency records for at most 7 days, rate-limit counters ' +
        'and in-flight leases for seconds to a day); a point-in-time restore would bring back expired ' +
        'records and counters, never data a caller needs.',
    );
    return table;
  }

  /**
   * The state table's grants, as explicit statements so the actions are exactly the stores':
   * the functions that keep state write it (`STORE_OPERATIONS`), any item but the brakes'
   * ({@link STORE_WRITE_CONDITION}); every function that serves calls reads the brakes item
   * (`BRAKES_READ_OPERATIONS`), and the aux function alone writes it (`BRAKES_WRITE_OPERATIONS`),
   * both on that item only ({@link BRAKES_ITEM_CONDITION}). The version function reaches nothing
   * else of the table, and aux nothing but the brakes.
   */
  private grantStateTable(): void {
    const dynamodb = (operations: readonly string[]) =>
      operations.map((operation) => `dynamodb:${operation}`);
    const table = this.stateTable.tableArn;
    for (const name of STATEFUL_FUNCTIONS) {
      this.functions[name].function.addToRolePolicy(
        new PolicyStatement({
          sid: 'WriteState',
          actions: dynamodb(STORE_OPERATIONS),
          resources: [table],
          // Every request of these three operations names its item's partition key, so the
          // condition always has a value to test (ForAllValues passes a request without the key;
          // none of these is one). The deploy's table check writes a `check#` item with
          // execute-v1's role: outside `brakes#`, it passes (and its function's description names
          // the condition, so the deploy that brings it runs the check again).
          conditions: STORE_WRITE_CONDITION,
        }),
      );
    }
    for (const name of BRAKES_READERS) {
      this.functions[name].function.addToRolePolicy(
        new PolicyStatement({
          sid: 'ReadBrakes',
          actions: dynamodb(BRAKES_READ_OPERATIONS),
          resources: [table],
          conditions: BRAKES_ITEM_CONDITION,
        }),
      );
    }
    this.functions[BRAKES_WRITER].function.addToRolePolicy(
      new PolicyStatement({
        sid: 'WriteBrakes',
        actions: dynamodb(BRAKES_WRITE_OPERATIONS),
        resources: [table],
        conditions: BRAKES_ITEM_CONDITION,
      }),
    );
  }

  /**
   * The audit table (docs/guide/audit.md): a record per call that can write,
   * under partition `t#<UTC day>#<shard>` sorted by `audit_id` (`sk`), so that a time window reads
   * with strongly consistent Queries of the base table; the `by-actor` index (partition `actor`,
   * sort `sk`, every attribute) serves `actor=`. On demand, TTL on `expires_at` (the runtime sets it
   * `AUDIT_RETENTION_DAYS` ahead), point-in-time recovery on (records are evidence: a bad write or a
   * deleted item can be restored), deletion protection on, and kept whatever happens to the stack
   * (`Retain`, even when the first create rolls back: deletion protection would refuse that delete
   * anyway, and an empty table costs nothing).
   */
  private createAuditTable(): Table {
    const table = new Table(this, 'AuditTable', {
      partitionKey: { name: AUDIT_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: AUDIT_TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: AUDIT_TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    table.addGlobalSecondaryIndex({
      indexName: AUDIT_TABLE.actorIndex,
      partitionKey: { name: AUDIT_TABLE.actorAttribute, type: AttributeType.STRING },
      sortKey: { name: AUDIT_TABLE.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    return table;
  }

  /**
   * The audit table's grants, as explicit statements so the actions are exactly the store's
   * (lambdas/platform/audit/audit-record.ts): the writers `PutItem` and `UpdateItem` on the table
   * (its conditions make a record created once and completed once; IAM cannot require them) and a
   * read of the digest secret (through the Parameters and Secrets extension, like the other
   * secrets); the reader `Query`, `GetItem` and `BatchGetItem` on the table and its actor index
   * (named, not `index/*`). The version function: nothing.
   */
  private grantAuditTable(): void {
    const dynamodb = (operations: readonly string[]) =>
      operations.map((operation) => `dynamodb:${operation}`);
    for (const name of AUDIT_WRITERS) {
      const fn = this.functions[name].function;
      fn.addToRolePolicy(
        new PolicyStatement({
          sid: 'WriteAuditRecords',
          actions: dynamodb(AUDIT_WRITE_OPERATIONS),
          resources: [this.auditTable.tableArn],
          // Records and their pointers only: never the seal head, which only the sealer moves.
          conditions: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...AUDIT_WRITER_LEADING_KEYS] },
          },
        }),
      );
      this.auditDigestSecret.grantRead(fn);
    }
    this.functions[AUDIT_READER].function.addToRolePolicy(
      new PolicyStatement({
        sid: 'ReadAuditRecords',
        actions: dynamodb(AUDIT_READ_OPERATIONS),
        resources: [this.auditTable.tableArn, `${this.auditTable.tableArn}/index/${AUDIT_TABLE.actorIndex}`],
      }),
    );
  }

  /**
   * At every deploy that changes it, after the table and the functions: the state table check
   * (lambdas/platform/state/table-write-check.ts) writes, updates and deletes one item with
   * execute-v1's own role (not a copy of its grants: the role the calls will use), the project's
   * client, the same table name and region, and the same VPC placement. A failure fails the
   * deploy, and CloudFormation rolls it back; DynamoDB Local, which takes any signature and has
   * no grants, cannot show this.
   */
  private checkStateTableAtDeploy(config: StackConfig): {
    readonly trigger: Trigger;
    readonly function: ProxyFunction;
  } {
    const owner = this.functions[STATE_TABLE_CHECK_ROLE_OF];
    const vpc = this.vpcPlacement(config);
    const check = new ProxyFunction(this, 'StateTableCheck', {
      // The operations and the keys they are limited to are in the description so that a change
      // of either changes the function's version, and the trigger runs the check again (it runs
      // when the function changes).
      description: `erp-proxy deploy check: ${STATE_TABLE_CHECK_ROLE_OF}'s role writes and deletes one item of the state table (${STORE_OPERATIONS.join(', ')}, on any item but ${STORE_WRITE_CONDITION['ForAllValues:StringNotLike']['dynamodb:LeadingKeys'].join(', ')})`,
      entry: `${PROJECT_ROOT}/${STATE_TABLE_CHECK_ENTRY}`,
      projectRoot: PROJECT_ROOT,
      memoryMb: config.versionAndAuxMemoryMb,
      timeoutSeconds: config.lambdaTimeoutSeconds,
      environment: { [RUNTIME_SETTINGS.stateTable.env]: this.stateTable.tableName },
      logRetention: config.logRetention,
      reservedConcurrency: undefined,
      ...(vpc ? { vpc } : {}),
      role: owner.role,
      readsSecrets: false,
    });
    const trigger = new Trigger(this, 'StateTableCheckTrigger', {
      handler: check.function,
      executeOnHandlerChange: true,
      executeAfter: [this.stateTable, ...Object.values(this.functions)],
    });
    this.holdTriggerProvider(config);
    return { trigger, function: check };
  }

  /**
   * CDK's trigger provider (the function that invokes the check for CloudFormation) held to the
   * stack's rules for functions: on Graviton, logging to a log group of the stack's with the
   * configured retention (not an `/aws/lambda/...` group kept forever), and writing only to it,
   * instead of the AWSLambdaBasicExecutionRole managed policy (any log group of the account).
   */
  private holdTriggerProvider(config: StackConfig): void {
    const provider = this.node.findChild(TRIGGER_PROVIDER_ID) as CustomResourceProviderBase;
    const logs = new LogGroup(this, 'StateTableCheckTriggerLogs', {
      retention: config.logRetention,
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      Resource: [logs.logGroupArn],
    });
    (provider.node.findChild('Role') as CfnResource).addPropertyDeletionOverride('ManagedPolicyArns');
    const handler = provider.node.findChild('Handler') as CfnResource;
    handler.addPropertyOverride('LoggingConfig', { LogGroup: logs.logGroupName });
    handler.addPropertyOverride('Architectures', [FUNCTION_ARCHITECTURE.name]);
  }

  /** The aux function's hourly license check. */
  private scheduleLicenseCheck(): Rule {
    const aux = this.functions.aux;
    // LicenseDaysLeft comes from calls only while there are calls: the hourly check records it
    // without them, so LicenseExpiring also fires on an idle proxy. The function tells this
    // constant event from API Gateway's (lambdas/platform/scheduled-jobs.ts); no route reaches it.
    // EventBridge invokes asynchronously, and Lambda retries a failed asynchronous invocation
    // twice by default: a license secret that cannot be read would count three AuxErrors an
    // hour. The next hour's check is the retry (API Gateway's calls are synchronous: unaffected).
    aux.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.hours(LICENSE_CHECK_INTERVAL_HOURS),
    });
    return new Rule(this, 'LicenseCheckSchedule', {
      description:
        'erp-proxy: hourly license check of the aux function; records LicenseDaysLeft for the LicenseExpiring alarm, with or without calls',
      schedule: Schedule.rate(Duration.hours(LICENSE_CHECK_INTERVAL_HOURS)),
      targets: [
        new LambdaFunction(aux.function, {
          event: RuleTargetInput.fromObject(LICENSE_CHECK_EVENT),
          // A check that could not be delivered within the hour is replaced by the next one.
          retryAttempts: 2,
          maxEventAge: Duration.hours(LICENSE_CHECK_INTERVAL_HOURS),
        }),
      ],
    });
  }

  /**
   * The aux function's brakes report, every {@link BRAKES_AGE_INTERVAL_MINUTES} minutes: it reads the
   * brakes and records `OldestBrakeAge` for the `BrakeForgotten` alarm, whether or not calls come
   * (idle instances record nothing). The same constant-event schedule as the license check, whose
   * asynchronous configuration of aux (no Lambda retry) applies: a store that cannot be read counts
   * one AuxErrors per report, and the next report is the retry.
   */
  private scheduleBrakesAge(): Rule {
    const interval = Duration.minutes(BRAKES_AGE_INTERVAL_MINUTES);
    return new Rule(this, 'BrakesAgeSchedule', {
      description: `erp-proxy: brakes report of the aux function every ${BRAKES_AGE_INTERVAL_MINUTES} minutes; records OldestBrakeAge for the BrakeForgotten alarm, with or without calls`,
      schedule: Schedule.rate(interval),
      targets: [
        new LambdaFunction(this.functions.aux.function, {
          event: RuleTargetInput.fromObject(BRAKES_AGE_EVENT),
          // A report not delivered within its interval is replaced by the next one.
          retryAttempts: 2,
          maxEventAge: interval,
        }),
      ],
    });
  }

  /**
   * The audit's sealing (docs/guide/audit.md, "Sealed"), unless `auditSealing` is `off`: the bucket
   * of the sealed windows, the key that signs the seals, the sealer and its two schedules.
   */
  private createAuditSealing(config: StackConfig): AuditSealing | undefined {
    const sealing = config.auditSealing;
    if (sealing === undefined) return undefined;
    const bucket = this.createAuditSealBucket(sealing);
    const key = this.createAuditSealKey();
    const sealer = this.createAuditSealer(config, sealing, bucket, key);
    this.guardAuditSealing(bucket, key, sealer);
    const { sealSchedule, verifySchedule } = this.scheduleAuditSealer(sealing, sealer);
    return { bucket, key, sealer, sealSchedule, verifySchedule };
  }

  /**
   * The sealed windows' bucket: S3 Object Lock with the deployed mode (`compliance`: no one, root
   * included, can change or delete an object before its retention ends; `governance`: a role with
   * `s3:BypassGovernanceRetention` can, so a trial can be torn down) and a default retention of
   * `auditLockDays` (default `auditRetentionDays`) days, which each object the sealer writes also
   * carries; versioned (Object Lock needs it, and a second version or a delete marker is what
   * `verify` names as tampering), private, encrypted, TLS only, and kept when the stack is deleted
   * (`Retain`, even when the first create rolls back: the objects are evidence, and an empty bucket
   * costs nothing). Object Lock is chosen when the bucket is created: a later change of the mode
   * changes only the default retention of new objects.
   */
  private createAuditSealBucket(sealing: AuditSealingConfig): Bucket {
    const { mode, lockDays } = sealing;
    const lockFor = Duration.days(lockDays);
    const bucket = new Bucket(this, AUDIT_SEALING_IDS.bucket, {
      objectLockEnabled: true,
      objectLockDefaultRetention:
        mode === 'compliance'
          ? ObjectLockRetention.compliance(lockFor)
          : ObjectLockRetention.governance(lockFor),
      versioned: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      bucket,
      'AwsSolutions-S1',
      'The sealed windows are written by the sealer alone (the bucket policy refuses any other writer) with If-None-Match, ' +
        'under Object Lock; every write and read of the bucket is in CloudTrail (data events, when the operator enables ' +
        'them), and `npm run audit-log -- verify` names any second version or delete marker. Server access logs would need ' +
        'a second bucket of their own and add nothing these do not show.',
    );
    return bucket;
  }

  /**
   * The key that signs the seals: asymmetric (`ECC_NIST_P256`, `SIGN_VERIFY`: ECDSA with SHA-256),
   * kept when the stack is deleted (the public key is what the auditors pinned), with an explicit
   * policy: the account administers it but may not sign; the sealer's role is added by
   * {@link guardAuditSealing}. The key policy names the role, and the role's own policy never names
   * the key (the role needs none to sign: the key policy grants it), so there is no dependency cycle.
   */
  private createAuditSealKey(): Key {
    // Never rotated: KMS rotates symmetric keys only (cdk-nag's AwsSolutions-KMS5 checks those alone),
    // and a new key would be a new public key for the auditors to pin. Seals name their key, so a key
    // replaced by hand leaves the older seals verifiable with the public key kept in the bucket.
    const key = new Key(this, AUDIT_SEALING_IDS.key, {
      description:
        'erp-proxy audit seal key: signs the audit\'s seals (docs/guide/audit.md, "Sealed"); only the audit sealer may sign',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.RETAIN,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersTheKey',
            principals: [new AccountRootPrincipal()],
            actions: [...AUDIT_SEAL_KEY_ADMIN_ACTIONS],
            resources: ['*'],
          }),
        ],
      }),
    });
    return key;
  }

  /**
   * The sealer (docs/guide/audit.md, "Sealed"): a function of its own that no route reaches, run by
   * two schedules, one run at a time (reserved concurrency 1 where the stack reserves concurrency).
   * It reads no secret (no Parameters and Secrets extension), and is not placed in the VPC: it
   * reaches AWS APIs only (DynamoDB, S3, KMS), never an ERP. It bundles the S3 and KMS clients of
   * the AWS SDK (`awsSdk: 'bundled'`), at the version of package-lock.json the tests ran rather than
   * the Lambda runtime's: no request waits for its cold start, so the bundled SDK's load costs
   * nothing that counts.
   */
  private createAuditSealer(
    config: StackConfig,
    sealing: AuditSealingConfig,
    bucket: Bucket,
    key: Key,
  ): ProxyFunction {
    const sealer = new ProxyFunction(this, AUDIT_SEALING_IDS.sealer, {
      description: `erp-proxy audit sealer: seals each closed ${sealing.sealMinutes}-minute window of audit records into the Object Lock bucket, signed; verifies the last day's daily`,
      entry: `${PROJECT_ROOT}/${AUDIT_SEALER_ENTRY}`,
      projectRoot: PROJECT_ROOT,
      memoryMb: AUDIT_SEALER_MEMORY_MB,
      timeoutSeconds: AUDIT_SEALER_TIMEOUT_SECONDS,
      environment: functionEnvironment('audit-sealer', config.settings, {
        ...this.stackSetValues(config),
        auditBucket: bucket.bucketName,
        auditSealKeyId: key.keyArn,
      }),
      logRetention: config.logRetention,
      reservedConcurrency: sealing.sealerConcurrency,
      readsSecrets: false,
      awsSdk: 'bundled',
    });
    const fn = sealer.function;
    // The audit table's base table only (strongly consistent reads; never an index).
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SealAuditRecords',
        actions: AUDIT_SEALER_OPERATIONS.map((operation) => `dynamodb:${operation}`),
        resources: [this.auditTable.tableArn],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'WriteSealedWindows',
        actions: [...AUDIT_SEALER_OBJECT_ACTIONS],
        resources: [bucket.arnForObjects('*')],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'ListSealedWindows',
        actions: [...AUDIT_SEALER_BUCKET_ACTIONS],
        resources: [bucket.bucketArn],
      }),
    );
    acknowledge(
      sealer.role.node.findChild('DefaultPolicy'),
      `AwsSolutions-IAM5[Resource::<${this.getLogicalId(bucket.node.defaultChild as CfnResource)}.Arn>/*]`,
      "The sealer writes and reads the objects of its own bucket only (one per window's records and seal, and the public " +
        'key), under keys it makes from the window (records/year=.../<window>.jsonl, seals/...): an object ARN cannot be ' +
        'narrower than the bucket. Only the sealer has it; the bucket policy refuses any other writer.',
    );
    // EventBridge invokes asynchronously: a failed run is not retried by Lambda (the next schedule
    // seals what it left, from the seal head), and an event still throttled behind a running seal
    // or verification after an hour is dropped.
    fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.hours(1) });
    return sealer;
  }

  /**
   * Who may sign and write: the key's policy grants `kms:Sign` (and `kms:GetPublicKey`) to the
   * sealer's role alone; the bucket's policy refuses an object write without `If-None-Match` (a put
   * can only create, never overwrite: the condition key `s3:if-none-match` is absent without the
   * header), and any object write, retention change or delete by a principal other than the
   * sealer's role. TLS is required by `enforceSSL`.
   */
  private guardAuditSealing(bucket: Bucket, key: Key, sealer: ProxyFunction): void {
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheSealerSigns',
        principals: [sealer.role],
        actions: [...AUDIT_SEALER_KEY_ACTIONS],
        resources: ['*'],
      }),
    );
    bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'RequireIfNoneMatch',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects('*')],
        conditions: { Null: { 's3:if-none-match': 'true' } },
      }),
    );
    bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheSealerWrites',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: [...AUDIT_BUCKET_GUARDED_WRITES],
        resources: [bucket.arnForObjects('*')],
        conditions: { StringNotEquals: { 'aws:PrincipalArn': sealer.role.roleArn } },
      }),
    );
  }

  /**
   * The sealer's two schedules, each sending its constant event (lambdas/platform/scheduled-jobs.ts):
   * every `auditSealMinutes` minutes the seal of the closed windows, and once a day the verification
   * of the last day's. EventBridge delivers at least once; the seal head's condition makes a second
   * delivery seal nothing twice.
   */
  private scheduleAuditSealer(
    sealing: AuditSealingConfig,
    sealer: ProxyFunction,
  ): { readonly sealSchedule: Rule; readonly verifySchedule: Rule } {
    const minutes = sealing.sealMinutes;
    const sealSchedule = new Rule(this, AUDIT_SEALING_IDS.sealSchedule, {
      description: `erp-proxy: seals the closed audit windows every ${minutes} minutes (AuditWindowsSealed, AuditSealLag)`,
      schedule: Schedule.rate(Duration.minutes(minutes)),
      targets: [
        new LambdaFunction(sealer.function, {
          event: RuleTargetInput.fromObject(AUDIT_SEAL_EVENT),
          // A seal not delivered within its window is replaced by the next one.
          retryAttempts: 2,
          maxEventAge: Duration.minutes(minutes),
        }),
      ],
    });
    const verifySchedule = new Rule(this, AUDIT_SEALING_IDS.verifySchedule, {
      description: `erp-proxy: verifies the last ${AUDIT_VERIFY_HOURS} hours of sealed audit windows once a day (AuditVerifyFailures)`,
      schedule: Schedule.rate(Duration.hours(AUDIT_VERIFY_HOURS)),
      targets: [
        new LambdaFunction(sealer.function, {
          event: RuleTargetInput.fromObject(AUDIT_VERIFY_EVENT),
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
        }),
      ],
    });
    return { sealSchedule, verifySchedule };
  }

  /** The HTTP API, its access log group and its `$default` stage (on the custom domain, if any). */
  private createApi(
    id: string,
    config: StackConfig,
    domain: DomainName | undefined,
  ): { readonly api: HttpApi; readonly accessLogs: LogGroup; readonly stage: HttpStage } {
    const api = new HttpApi(this, 'HttpApi', {
      apiName: id,
      description: 'erp-proxy: JSON-RPC envelope proxy in front of ERP instances',
      createDefaultStage: false,
      disableExecuteApiEndpoint: config.domain?.disableExecuteApiEndpoint ?? false,
    });

    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: config.logRetention,
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
      ...(domain ? { domainMapping: { domainName: domain } } : {}),
    });

    return { api, accessLogs, stage };
  }

  /** Exactly the routes of the route table, each to its function. */
  private addRoutes(): void {
    const integrations = Object.fromEntries(
      FUNCTION_NAMES.map((name) => [
        name,
        new HttpLambdaIntegration(`${FUNCTION_IDS[name]}Integration`, this.functions[name].function, {
          payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
          timeout: Duration.seconds(HTTP_API_INTEGRATION_TIMEOUT_SECONDS),
        }),
      ]),
    ) as Record<FunctionName, HttpLambdaIntegration>;

    // Exactly the routes of the table: no $default route, so anything else is API Gateway's 404.
    // A route's refused methods (GET and DELETE /mcp) reach its function, which answers them 405.
    for (const route of ROUTES) {
      for (const method of [route.method, ...(route.refusedMethods ?? [])]) {
        const key = routeKey({ method, path: route.path });
        const [created] = this.api.addRoutes({
          path: route.path,
          methods: [HTTP_METHODS[method]],
          integration: integrations[route.fn],
        });
        if (!created) throw new Error(`route ${key} was not created`);
        acknowledge(
          created,
          'AwsSolutions-APIG4',
          method === route.method
            ? `${key}: ${ROUTE_AUTH_REASONS[route.auth]}`
            : `${key}: answered 405 Method Not Allowed by the function after the same key check as ${routeKey(route)} (${ROUTE_AUTH_REASONS[route.auth]})`,
        );
      }
    }
  }

  /** The stack's outputs: URLs, the alarm topic, the secrets, the log groups, the dashboard. */
  private addOutputs(config: StackConfig, domain: DomainName | undefined): void {
    if (!config.domain?.disableExecuteApiEndpoint) {
      new CfnOutput(this, 'ApiUrl', {
        value: this.stage.url,
        description: 'Base URL of the API ($default stage)',
      });
    }
    if (domain && config.domain) {
      new CfnOutput(this, 'CustomDomainUrl', { value: `https://${config.domain.domainName}/` });
      new CfnOutput(this, 'CustomDomainTarget', {
        value: domain.regionalDomainName,
        description: 'Point a CNAME or alias record for the custom domain here',
      });
    }
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarmTopic.topicArn,
      description: 'Every alarm notifies this SNS topic (ALARM and OK); subscribe to it',
    });
    new CfnOutput(this, 'ProxyKeysSecretArn', { value: this.proxyKeysSecret.secretArn });
    new CfnOutput(this, 'LicenseSecretArn', { value: this.licenseSecret.secretArn });
    if (this.oauthIdentitiesSecret)
      new CfnOutput(this, 'OAuthIdentitiesSecretArn', { value: this.oauthIdentitiesSecret.secretArn });
    new CfnOutput(this, 'AuditDigestSecretArn', {
      value: this.auditDigestSecret.secretArn,
      description: "The key of the audit's HMACs (values, ERP keys): whoever holds it can check a digest",
    });
    new CfnOutput(this, 'AuditTableName', {
      value: this.auditTable.tableName,
      description:
        'The audit records (GET /_/audit reads them; kept, with deletion protection, when the stack is deleted)',
    });
    if (this.auditSealing) {
      new CfnOutput(this, 'AuditBucketName', {
        value: this.auditSealing.bucket.bucketName,
        description:
          'The sealed audit windows (Object Lock; kept when the stack is deleted): npm run audit-log -- verify reads them',
      });
      new CfnOutput(this, 'AuditSealKeyArn', {
        value: this.auditSealing.key.keyArn,
        description: 'The KMS key that signs the seals (only the audit sealer may sign); pin its public key',
      });
      new CfnOutput(this, 'AuditSealerLogGroup', {
        value: this.auditSealing.sealer.logGroup.logGroupName,
        description: 'Logs of the audit sealer (a line per run)',
      });
    }
    new CfnOutput(this, 'AccessLogGroup', { value: this.accessLogs.logGroupName });
    for (const name of FUNCTION_NAMES) {
      new CfnOutput(this, `${FUNCTION_IDS[name]}LogGroup`, {
        value: this.functions[name].logGroup.logGroupName,
        description: `Logs of the ${name} function (one JSON line per request)`,
      });
    }
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }

  private createProxyKeysSecret(config: StackConfig): ISecret {
    if (config.proxyKeysSecretArn) {
      return Secret.fromSecretCompleteArn(this, 'ProxyKeysSecret', config.proxyKeysSecretArn);
    }
    // A plain-string key: a generated value can only be a top-level JSON field, and the runtime's
    // JSON form needs the key inside {"keys":[{"name","key"}]}. The plain form is one key named
    // "default"; replace the value with the JSON form to name keys or rotate without downtime.
    const secret = new Secret(this, SECRET_IDS.proxyKeys, {
      description:
        'erp-proxy API keys for the x-api-key header. Either one key as a plain string (named "default"), or JSON ' +
        '{"keys":[{"name":"billing","key":"..."}]} for several named keys. Keys are at least 16 characters. ' +
        'Changes take effect within SECRETS_MAX_AGE seconds, without a redeploy.',
      generateSecretString: { ...SECRET_VALUE_SOURCES.proxyKeys },
      // Kept when removed from the stack or replaced: callers hold these keys. Not kept when the
      // stack's first create rolls back: nobody holds them yet, and a kept one would be billed.
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'Proxy keys are shared with the calling services out of band, so an automatic rotation would lock them out; ' +
        'keys are rotated by hand with the named-key JSON form (old and new key valid together), see docs/deployment.md.',
    );
    return secret;
  }

  private createLicenseSecret(config: StackConfig): ISecret {
    if (config.licenseSecretArn) {
      return Secret.fromSecretCompleteArn(this, 'LicenseSecret', config.licenseSecretArn);
    }
    // Secrets Manager needs some value; "{}" is a license with no fields, which the proxy
    // refuses (HTTP 403, code 0) until the real license is put in.
    const secret = new Secret(this, SECRET_IDS.license, {
      description:
        'erp-proxy license. Created as a placeholder ({}); until you put the license here, execute and version calls ' +
        'answer HTTP 403. Put the license JSON {"licensee":"...","valid_until":"YYYY-MM-DD","signature":"..."} with: ' +
        'aws secretsmanager put-secret-value --secret-id <this ARN> --secret-string file://license.json',
      secretStringValue: SecretValue.unsafePlainText(SECRET_VALUE_SOURCES.license),
      // Kept when removed from the stack or replaced: it holds the license the operator put. Not
      // kept when the stack's first create rolls back (it still holds the placeholder).
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'The license is a signed document issued by the vendor with its own expiry date; it cannot be rotated by a function, ' +
        'it is replaced by hand when renewed (the LicenseExpiring alarm warns ahead).',
    );
    return secret;
  }

  /**
   * The key of the audit's HMACs (docs/guide/audit.md): generated at the first deploy and never
   * written by the stack again (its value source is frozen in {@link SECRET_VALUE_SOURCES}), kept
   * when removed from the stack or replaced, as the other created secrets. The functions read it on
   * the first record that needs it, never at cold start; a record names the key by `digest_key_id`,
   * so digests made before a change of the value stay checkable by whoever kept the old one.
   */
  private createAuditDigestSecret(): ISecret {
    const secret = new Secret(this, SECRET_IDS.auditDigest, {
      description:
        "erp-proxy audit digest key: the HMAC key of the audit records' digests (written values, ERP keys, idempotency keys, " +
        'id lists), never stored in a record. Generated by the stack; a new value starts a new digest_key_id ' +
        '(docs/guide/audit.md). Changes take effect within SECRETS_MAX_AGE seconds.',
      generateSecretString: { ...SECRET_VALUE_SOURCES.auditDigest },
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'The audit digest key keys the HMACs that records keep for their retention (400 days by default): an automatic ' +
        'rotation would make digests of the same value differ between records. It is changed by hand when needed; ' +
        'each record names its key (digest_key_id), and the key never leaves Secrets Manager and the writing functions.',
    );
    return secret;
  }

  /**
   * The OAuth identity map's secret, with OAuth on (`mcpOauthIssuers`): the operator's
   * (`mcpOauthIdentitiesSecretArn`), or a new one holding an empty map, which refuses every
   * signed-in person until the operator puts the map (README, "Remote agents with OAuth").
   */
  private createOAuthIdentitiesSecret(config: StackConfig): ISecret | undefined {
    if ((config.settings.mcpOauthIssuers ?? []).length === 0) return undefined;
    if (config.mcpOauthIdentitiesSecretArn)
      return Secret.fromSecretCompleteArn(
        this,
        SECRET_IDS.oauthIdentities,
        config.mcpOauthIdentitiesSecretArn,
      );
    const secret = new Secret(this, SECRET_IDS.oauthIdentities, {
      description:
        'erp-proxy OAuth identity map for POST /mcp: {"identities":[{"name","match":{"claim","value"},"erp":{"url","db","user_id","api_key"},"policy"}]}. ' +
        'Created with an empty map, which refuses every signed-in person; put yours with aws secretsmanager put-secret-value.',
      secretStringValue: SecretValue.unsafePlainText(SECRET_VALUE_SOURCES.oauthIdentities),
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'The identity map is written by the operator (it names ERP users and their API keys); it has no rotation a function could do.',
    );
    return secret;
  }

  /**
   * With OAuth on, the audience tokens must carry: `mcpOauthAudience` when given, else the public
   * `/mcp` URL (the custom domain's, or the API's own). Set after the API exists; the API does not
   * depend on the function, so there is no cycle.
   */
  private setOAuthAudience(config: StackConfig, domain: DomainName | undefined): void {
    if (
      (config.settings.mcpOauthIssuers ?? []).length === 0 ||
      config.settings.mcpOauthAudience !== undefined
    )
      return;
    const base = domain ? `https://${domain.name}` : this.api.apiEndpoint;
    this.functions.mcp.function.addEnvironment('MCP_OAUTH_AUDIENCE', `${base}/mcp`);
  }

  /** The functions' VPC placement (made once: the functions and the table check share it). */
  #vpcPlacement: { readonly value: FunctionVpcPlacement | undefined } | undefined;

  private vpcPlacement(config: StackConfig): FunctionVpcPlacement | undefined {
    this.#vpcPlacement ??= { value: this.makeVpcPlacement(config) };
    return this.#vpcPlacement.value;
  }

  private makeVpcPlacement(config: StackConfig): FunctionVpcPlacement | undefined {
    if (!config.vpc) return undefined;
    const { vpcId, subnetIds, securityGroupIds } = config.vpc;
    // Imported from ids, not looked up, so the synth needs no AWS account.
    const vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId, availabilityZones: Fn.getAzs() });
    const subnets = subnetIds.map((subnetId, index) => Subnet.fromSubnetId(this, `Subnet${index}`, subnetId));
    let securityGroups: ISecurityGroup[];
    if (securityGroupIds.length > 0) {
      securityGroups = securityGroupIds.map((sgId, index) =>
        SecurityGroup.fromSecurityGroupId(this, `SecurityGroup${index}`, sgId),
      );
    } else {
      securityGroups = [
        new SecurityGroup(this, 'FunctionSecurityGroup', {
          vpc,
          description: 'erp-proxy functions: outbound to ERPs and AWS APIs only, no inbound',
          allowAllOutbound: true,
        }),
      ];
    }
    return { vpc, subnets, securityGroups };
  }

  private customDomain(config: StackConfig): DomainName | undefined {
    if (!config.domain) return undefined;
    const { domainName, certificateArn, hostedZoneId, hostedZoneName } = config.domain;
    const domain = new DomainName(this, 'CustomDomain', {
      domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', certificateArn),
    });
    if (hostedZoneId && hostedZoneName) {
      new ARecord(this, 'CustomDomainRecord', {
        zone: HostedZone.fromHostedZoneAttributes(this, 'HostedZone', {
          hostedZoneId,
          zoneName: hostedZoneName,
        }),
        recordName: domainName,
        target: RecordTarget.fromAlias(
          new ApiGatewayv2DomainProperties(domain.regionalDomainName, domain.regionalHostedZoneId),
        ),
      });
    }
    return domain;
  }

  /**
   * The topic every alarm notifies: the operator's (`alarmTopicArn`) or one the stack creates.
   * `alarmEmail` subscribes an address to it.
   */
  private createAlarmTopic(config: StackConfig): ITopic {
    const { email, topicArn } = config.alarms;
    let topic: ITopic;
    if (topicArn) {
      topic = Topic.fromTopicArn(this, 'AlarmTopic', topicArn);
    } else {
      const created = new Topic(this, 'AlarmTopic', { displayName: 'erp-proxy alarms', enforceSSL: true });
      // The topic policy CDK writes (for enforceSSL) replaces SNS's default one, so CloudWatch
      // must be allowed to publish explicitly, for this account's alarms only.
      created.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchAlarmsPublish',
          actions: ['sns:Publish'],
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          resources: [created.topicArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': this.account },
            ArnLike: {
              'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:*`,
            },
          },
        }),
      );
      acknowledge(
        created,
        'AwsSolutions-SNS2',
        'Alarm notifications carry only alarm names and states, no data. CloudWatch cannot publish to a topic encrypted ' +
          'with the AWS-managed SNS key, and a customer-managed key for this alone is not worth its cost.',
      );
      topic = created;
    }
    if (email) topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
