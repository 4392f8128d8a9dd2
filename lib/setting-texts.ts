/**
 * @module setting-texts
 * The runtime settings' texts, which only the docs show: each setting's one-line meaning, its
 * default as the docs show it (when the schema's unset value does not say it) and, for a setting
 * an operator cannot deploy, why. They are the catalogue's (lambdas/platform/settings.ts), kept
 * here because every function bundles the catalogue and reads it at cold start, and none of them
 * reads these texts: `npm run docs:settings` renders them (lib/settings-docs.ts), and
 * test/infra/settings-catalogue.test.ts checks them.
 *
 * Keyed by the catalogue's names: a setting without its texts, texts without a setting, a `why`
 * for a deployable setting or none for one that is not, each fails the typecheck.
 */
import type { RUNTIME_SETTINGS, RuntimeSettingName } from '../lambdas/platform/settings.ts';

/** The texts of one runtime setting. */
export interface SettingText {
  /** One line: what it means. */
  readonly meaning: string;
  /**
   * The default as the docs show it (markdown; a bare value is shown as code), when it is not
   * simply what the schema gives for an unset value.
   */
  readonly defaultText?: string;
  /** Why an operator cannot set it on a deployed stack: exactly for a setting with `notDeployable`. */
  readonly why?: string;
}

/** The texts a setting must have: a `why` when it is not deployable, none when it is. */
type TextsOf<S> = S extends { readonly notDeployable: object }
  ? SettingText & { readonly why: string }
  : SettingText & { readonly why?: never };

/** Every runtime setting's texts, under its name in the catalogue and in its order. */
export const RUNTIME_SETTING_TEXTS: Readonly<Record<RuntimeSettingName, SettingText>> = Object.freeze({
  defaultTimeoutSeconds: {
    meaning: 'upstream timeout (s) when the request has no valid `x-request-timeout`',
  },
  maxTimeoutSeconds: {
    meaning: 'cap on `x-request-timeout` (s); on AWS at least 2 s below `lambdaTimeout`',
  },
  allowedTargets: {
    meaning:
      'ERP hosts the proxy may call: host names (`*.` wildcards), IP addresses and CIDRs; empty on AWS: public addresses only (docs/target-policy.md)',
    defaultText: 'local: `127.0.0.0/8,::1/128,localhost`; AWS: none',
  },
  allowedDatabases: {
    meaning: 'database names calls may use',
    defaultText: '*any*',
  },
  v1Transport: {
    meaning:
      'how v1 calls reach the ERP: `auto` (`/jsonrpc`, JSON-2 for ERP 22+), `json2` (JSON-2 for every ERP 19+), `jsonrpc` (never translated)',
  },
  v2Transport: {
    meaning:
      'how v2 calls reach the ERP: `json2` (-32006 below ERP 19) or `auto` (ERP 16-18 over `/jsonrpc` when `user_id` is given)',
  },
  mcpWriteTools: {
    meaning:
      '`POST /mcp` also offers the tools that change ERP data (`create`, `write`, `unlink`, `call_method`); off, they are not listed',
  },
  mcpOauthIssuers: {
    meaning:
      'authorization servers whose access tokens `POST /mcp` accepts (OAuth on; see Remote agents with OAuth); their metadata names the keys',
    defaultText: '*none: OAuth off*',
  },
  mcpOauthAudience: {
    meaning:
      'the audience (`aud`) access tokens must carry, and the resource of the protected resource metadata: the public `/mcp` URL',
    defaultText: 'local: `http://<HOST>:<PORT>/mcp`; AWS: the API URL + `/mcp` (the stack sets it)',
  },
  mcpOauthIdentitiesSecretId: {
    meaning: 'Secrets Manager secret holding the OAuth identity map (see Remote agents with OAuth)',
    why: 'the ARN of the identity-map secret: the one the stack creates with OAuth on, or `mcpOauthIdentitiesSecretArn`',
  },
  mcpOauthIdentities: {
    meaning: 'the OAuth identity map as JSON, locally: `{"identities":[{name, match, erp, policy}]}`',
    why: 'the map holds ERP keys, which a function environment would show to anyone who can read the function: on AWS it is in its secret',
  },
  mcpAllowedOrigins: {
    meaning:
      'web origins whose pages may call `POST /mcp` from a browser; a request with any other `Origin` header is 403 (one without `Origin` is not a browser page and passes)',
    defaultText: '*none*',
  },
  targetLimits: {
    meaning:
      'limits per ERP host, binding every caller together: JSON `{"host or IP": {"requests": N, "per": "second|minute|hour|day", "in_flight": N}}`, each part optional (see Limits)',
    defaultText: '*none*',
  },
  stripDebug: {
    meaning: 'remove `debug` (server tracebacks) from ERP error data',
    defaultText: '`true` deployed, `false` locally',
  },
  serverTiming: {
    meaning: '`off`: execute and MCP answers carry no `Server-Timing` (`erp`, `store`, `proxy`)',
  },
  maxResponseBytes: {
    meaning: 'largest ERP answer read; ten times that (at most 64 MiB) when the client accepts gzip or br',
  },
  proxyKeysSecretId: {
    meaning:
      'Secrets Manager secret holding the proxy keys (plain key or the JSON form); set only one of `PROXY_API_KEY`, `PROXY_API_KEYS` and this',
    why: 'the ARN of the proxy-keys secret: the one the stack creates, or `proxyKeysSecretArn`',
  },
  licenseSecretId: {
    meaning: 'Secrets Manager secret holding the license JSON',
    why: 'the ARN of the license secret: the one the stack creates, or `licenseSecretArn`',
  },
  licensePublicKey: {
    meaning: 'Ed25519 public key (base64 or PEM); when set, licenses must be signed',
  },
  licenseWarningDays: {
    meaning:
      'warn when the license expires within this many days: the `LicenseExpiring` alarm, the local server at start, and each function once per execution environment (a log line)',
  },
  secretsMaxAgeSeconds: {
    meaning: 'seconds the secrets are cached: how long a key rotation or a new license takes to apply',
  },
  secretsExtensionPort: {
    meaning:
      'port of the AWS Parameters and Secrets Lambda Extension: the secrets are read through its localhost API; unset, with the AWS SDK',
    defaultText: 'AWS: `2773`',
    why: 'set with the Parameters and Secrets extension layer the stack adds to every function',
  },
  auxPublic: {
    meaning:
      '`license`, `metrics` or both: serve these `/_/` endpoints without `x-api-key` (`/_/about` is always public)',
  },
  metricsWindowSeconds: {
    meaning: 'AWS: the window `/_/metrics` reads from CloudWatch',
    why: "fixed to the alarms' 5-minute period, so `/_/metrics` and the alarms count the same window",
  },
  metricsCacheSeconds: {
    meaning: 'AWS: how long a `/_/metrics` answer is reused',
    why: 'fixed: each CloudWatch GetMetricData call is billed, and a scrape every few seconds must not make one each',
  },
  logLevel: {
    meaning:
      '`TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `CRITICAL`, `SILENT`; `POWERTOOLS_LOG_LEVEL`, when set, wins',
  },
  powertoolsLogLevel: {
    meaning: "Powertools' own log level variable; wins over `LOG_LEVEL`, as in Powertools",
    why: 'the stack sets it to `logLevel`, as `LOG_LEVEL`',
  },
  serviceName: {
    meaning: 'service name in logs and metrics',
    why: 'the alarms and the dashboard read the `service` dimension',
  },
  metricsNamespace: {
    meaning: 'CloudWatch namespace of the service metrics',
    why: 'the alarms and the dashboard read this namespace',
  },
  port: {
    meaning: 'local server port',
    why: 'API Gateway invokes the functions; nothing listens',
  },
  host: {
    meaning: 'local server address',
    why: 'API Gateway invokes the functions; nothing listens',
  },
  erpDoublePort: {
    meaning:
      'port of the ERP double (`npm run erp-double` listens on it, 0: on any free port it prints; the curls `npm start` prints call it). 8788: no ERP listens there by default',
    why: 'the ERP double is a local tool for trying the proxy',
  },
  proxyApiKey: {
    meaning: 'one proxy key (16+ characters)',
    defaultText: '*generated (local)*',
    why: 'a key in a function environment would be readable by anyone who can read the function: on AWS the keys are in the proxy-keys secret',
  },
  proxyApiKeys: {
    meaning:
      'several named keys: `{"keys":[{"name":"billing","key":"..."}]}`; the name appears in logs. A name may repeat (a rotation); a key value may not. A key may carry a `policy` (see Key policies)',
    why: 'a key in a function environment would be readable by anyone who can read the function: on AWS the keys are in the proxy-keys secret',
  },
  licenseFile: {
    meaning: 'local license file; with no license configured, a local run uses a development license',
    why: 'a function has no file of yours: on AWS the license is in the license secret',
  },
  buildCommit: {
    meaning: 'the commit `/_/about` shows; the stack defaults to the checked-out commit',
    defaultText: '*the commit (deployed)*',
  },
  buildTime: {
    meaning: 'the build time `/_/about` shows; the stack defaults to the commit time',
    defaultText: '*the commit (deployed)*',
  },
  functionName: {
    meaning:
      'selects the AWS defaults (no generated key, no development license, no allowed targets, `/_/metrics` from CloudWatch); `/_/about` shows it',
    defaultText: '*set by Lambda*',
    why: 'set by Lambda',
  },
  idempotencyTtlSeconds: {
    meaning:
      'seconds an `Idempotency-Key` answer is kept and replayed (default 24 h, at most 7 days); a key used again after that runs again',
  },
  confirmTtlSeconds: {
    meaning:
      "seconds a person has to answer a confirmation form (a key's or identity's `confirm`: docs/guide/confirmations.md; default 10 min, at most 60); a later answer is asked again",
  },
  brakesRefreshSeconds: {
    meaning:
      "seconds an instance keeps its copy of the operators' brakes: a brake applies to every call started this long after it is set",
  },
  stateTable: {
    meaning:
      "DynamoDB table of the proxy's state (idempotency records, limit counters, brakes); locally used only with `AWS_ENDPOINT_URL_DYNAMODB`, else an embedded in-process store (one process, lost on restart)",
    defaultText: "AWS: the stack's table; local: *none* (the embedded store)",
    why: 'the name of the table the stack creates for idempotency records and limits',
  },
  audit: {
    meaning:
      'the audit of writes (docs/guide/audit.md): `on` (a write whose record cannot be written is refused 503 -32004), `best-effort`, `off`',
  },
  auditTable: {
    meaning:
      'DynamoDB table of the audit records; locally only with `AWS_ENDPOINT_URL_DYNAMODB`, else an embedded ring (lost on restart)',
    defaultText: "AWS: the stack's audit table; local: *none* (the embedded ring)",
    why: 'the name of the audit table the stack creates',
  },
  auditRetentionDays: {
    meaning: 'days an audit record is kept (then deleted by TTL)',
  },
  auditPendingAfterSeconds: {
    meaning:
      'seconds after which a record still `pending` reads as `unknown` (its function died or could not complete it)',
    defaultText: "AWS: `lambdaTimeout` + 30; local: the local server's function timeout + 30",
    why: 'the writing functions’ Lambda timeout (`lambdaTimeout`) and a margin, set by the stack',
  },
  auditDigestSecretId: {
    meaning: "Secrets Manager secret keying the audit's HMACs; read on the first write",
    why: 'the ARN of the audit digest secret the stack creates',
  },
  auditDigestKey: {
    meaning: "the audit's digest key locally (32+ characters); unset, each start generates one",
    defaultText: '*generated at start (local)*',
    why: 'a key in a function environment would be readable by anyone who can read the function: on AWS it is the audit digest secret',
  },
  auditSealing: {
    meaning:
      'sealing the audit: Object Lock `compliance`, `governance` (a trial), or `off`; set before the first deploy',
  },
  auditSealMinutes: {
    meaning: 'minutes of a sealed audit window (a divisor of 60)',
  },
  auditLockDays: {
    meaning: "days a sealed window's objects are locked",
    defaultText: '`AUDIT_RETENTION_DAYS`',
  },
  auditBucket: {
    meaning: 'S3 bucket of the sealed audit windows',
    why: 'its sealed-audit bucket',
  },
  auditSealKeyId: {
    meaning: 'KMS key (`ECC_NIST_P256`) signing the seals',
    why: 'its seal signing key',
  },
  auditDir: {
    meaning: 'where a local run seals its audit (git-ignored)',
    why: 'deployed: the bucket',
  },
  auditSealKeyFile: {
    meaning: "the local sealer's P-256 key, made on first use (mode 0600, git-ignored)",
    why: 'deployed: the KMS key',
  },
  dynamodbEndpoint: {
    meaning:
      "the AWS SDK's own variable: DynamoDB at this URL (DynamoDB Local); with `STATE_TABLE`, a local run keeps its state there instead of in process",
    defaultText: "*the region's endpoint*",
    why: 'deployed, the functions reach DynamoDB at its regional endpoint',
  },
  localStoreMaxBytes: {
    meaning:
      "room of the embedded store (`npm start` without `STATE_TABLE`) for `Idempotency-Key` records, in bytes (answers, keys and a fixed overhead each; a write in progress holds room for the largest answer, about 400 KB); each caller holds at most a quarter; the limits' counters and slots have room of their own",
    why: "deployed, the state is in the stack's DynamoDB table",
  },
  localStoreMaxRecords: {
    meaning:
      'room of the embedded store for `Idempotency-Key` records, in records; each caller holds at most a quarter. A keyed write that does not fit (expired records dropped first, a live one never) is refused 503 -32004',
    why: "deployed, the state is in the stack's DynamoDB table",
  },
  awsAccessKeyId: {
    meaning: 'credentials of the DynamoDB calls, signed without the AWS SDK; never logged or shown',
    defaultText: '*set by Lambda*',
    why: "set by Lambda (the function role's credentials)",
  },
  awsSecretAccessKey: {
    meaning: 'credentials of the DynamoDB calls; never logged or shown',
    defaultText: '*set by Lambda*',
    why: "set by Lambda (the function role's credentials)",
  },
  awsSessionToken: {
    meaning:
      'credentials of the DynamoDB calls, and the token every read through the Parameters and Secrets extension presents; never logged or shown',
    defaultText: '*set by Lambda*',
    why: "set by Lambda (the function role's credentials)",
  },
  region: {
    meaning: 'region of the CloudWatch, Secrets Manager and DynamoDB calls; `/_/about` shows it',
    defaultText: '*set by Lambda*',
    why: 'set by Lambda',
  },
} satisfies { readonly [K in RuntimeSettingName]: TextsOf<(typeof RUNTIME_SETTINGS)[K]> });
