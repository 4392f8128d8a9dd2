/**
 * @module platform/config
 * The service configuration, parsed once from the environment with zod. This is the only module
 * that reads `process.env`. A bad value fails fast at cold start with a message naming the
 * variable and the problem.
 */
import { randomBytes } from 'node:crypto';
import { parsePublicKey } from './license.ts';
import {
  AUX_PUBLIC_NAMES,
  type AuxPublicName,
  METRICS_NAMESPACE,
  SERVICE_NAME,
  V1_TRANSPORTS,
  type V1TransportMode,
  V2_TRANSPORTS,
  type V2TransportMode,
} from './names.ts';
import './zod.ts';
import * as z from 'zod';

/** Lambda's synchronous response limit (6 MB), for the whole serialized response. */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;

/**
 * Default upstream read limit. The ERP answer is re-serialized into the envelope, and API
 * Gateway's payload is itself JSON, so the body string is escaped once more: every `"` and `\`
 * doubles. Half the Lambda limit, minus room for headers and the envelope, always fits.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = Math.floor(LAMBDA_RESPONSE_LIMIT_BYTES / 2) - 64 * 1024;

const csv = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  );

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', ''], {
    error: 'expected true or false',
  })
  .optional()
  .transform((value) => value === 'true' || value === '1' || value === 'yes' || value === 'on');

const positiveInt = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return fallback;
      if (!/^\d+$/.test(value.trim()) || Number(value) <= 0) {
        ctx.addIssue({ code: 'custom', message: `expected a positive integer, got "${value}"` });
        return z.NEVER;
      }
      return Number(value);
    });

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/** The log levels Powertools Logger knows, lowest first (the stack's `logLevel` uses them too). */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** A log level name, any case; empty means not set. */
const logLevel = optionalString
  .transform((value) => value?.toUpperCase())
  .pipe(z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).optional());

const EnvSchema = z.object({
  ERP_DEFAULT_TIMEOUT: positiveInt(15),
  ERP_MAX_TIMEOUT: positiveInt(25),
  // Set but listing nothing (" , "): a mistake, not a request for the default.
  ERP_ALLOWED_TARGETS: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      if (
        value !== undefined &&
        value.trim() !== '' &&
        value.split(',').every((part) => part.trim() === '')
      ) {
        ctx.addIssue({
          code: 'custom',
          message: 'lists no target (only commas and spaces); unset it for the default',
        });
      }
    })
    .pipe(csv),
  ERP_ALLOWED_DATABASES: csv,
  ERP_V1_TRANSPORT: optionalString
    .transform((value) => value?.toLowerCase() ?? 'auto')
    .pipe(z.enum(V1_TRANSPORTS, { error: `expected one of ${V1_TRANSPORTS.join(', ')}` })),
  ERP_V2_TRANSPORT: optionalString
    .transform((value) => value?.toLowerCase() ?? 'json2')
    .pipe(z.enum(V2_TRANSPORTS, { error: `expected one of ${V2_TRANSPORTS.join(', ')}` })),
  ERP_STRIP_DEBUG: bool,
  MAX_RESPONSE_BYTES: positiveInt(DEFAULT_MAX_RESPONSE_BYTES),
  PROXY_KEYS_SECRET_ID: optionalString,
  LICENSE_SECRET_ID: optionalString,
  LICENSE_PUBLIC_KEY: optionalString,
  AUX_PUBLIC: csv.pipe(
    z.array(
      z.enum(AUX_PUBLIC_NAMES, {
        error: `AUX_PUBLIC lists only ${AUX_PUBLIC_NAMES.map((name) => `"${name}"`).join(' and ')}`,
      }),
    ),
  ),
  SECRETS_MAX_AGE: positiveInt(300),
  // Set (by the stack, with the AWS Parameters and Secrets Lambda Extension layer): the secrets
  // are read through the extension on this localhost port instead of the AWS SDK.
  PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: positiveInt(0).pipe(
    z.number().max(65535, 'expected a port number up to 65535'),
  ),
  METRICS_WINDOW_SECONDS: positiveInt(300),
  METRICS_CACHE_SECONDS: positiveInt(60),
  // Powertools' own variable wins over LOG_LEVEL, as in Powertools itself.
  POWERTOOLS_LOG_LEVEL: logLevel,
  LOG_LEVEL: logLevel,
  POWERTOOLS_SERVICE_NAME: optionalString,
  POWERTOOLS_METRICS_NAMESPACE: optionalString,
  PORT: positiveInt(8787).pipe(z.number().max(65535, 'expected a port number up to 65535')),
  HOST: optionalString,
  PROXY_API_KEY: optionalString,
  PROXY_API_KEYS: optionalString,
  LICENSE_FILE: optionalString,
  AWS_LAMBDA_FUNCTION_NAME: optionalString,
  AWS_REGION: optionalString,
  BUILD_COMMIT: optionalString,
  BUILD_TIME: optionalString,
});

/** A named proxy key (README, Configuration: `PROXY_API_KEYS`). */
export interface NamedKey {
  readonly name: string;
  readonly key: string;
}

/**
 * The one trimming applied to a proxy key, presented or stored, before any comparison: surrounding
 * whitespace is not part of a key (HTTP already strips spaces and tabs around a header value;
 * this also drops what a body value can carry, such as a newline). {@link findCallerKey} and
 * {@link isSameProxyKey} (platform/secrets) apply it to presented keys, {@link parseProxyKeys} to
 * stored ones (a secret's value often ends with a newline), so a stored key authenticates, two
 * names never share one key, and a key that authenticates is recognised wherever it shows up.
 */
export function trimProxyKey(text: string): string {
  return text.trim();
}

const ProxyKeysJson = z.object({
  keys: z
    .array(
      z.object({
        name: z.string().min(1, 'each key needs a name'),
        key: z
          .string()
          .transform(trimProxyKey)
          .pipe(z.string().min(16, 'a proxy key must be at least 16 characters')),
      }),
    )
    // A name may repeat: a caller's old and new key during a rotation.
    .min(1, 'at least one key is needed'),
});

/**
 * Parses a proxy-keys document: either one plain key, or JSON `{"keys":[{name,key}]}`.
 * Throws an `Error` whose message never contains a key.
 */
export function parseProxyKeys(raw: string, defaultName = 'default'): NamedKey[] {
  const text = trimProxyKey(raw);
  if (text.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error('proxy keys: the JSON form is not valid JSON');
    }
    const parsed = ProxyKeysJson.safeParse(json);
    if (!parsed.success) {
      throw new Error(
        `proxy keys: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    // One value under two names would make the caller's name in logs and metrics a guess.
    const firstIndex = new Map<string, number>();
    for (const [index, entry] of parsed.data.keys.entries()) {
      const earlier = firstIndex.get(entry.key);
      if (earlier !== undefined) {
        throw new Error(
          `proxy keys: keys.${earlier} and keys.${index} have the same key value; give each name its own key`,
        );
      }
      firstIndex.set(entry.key, index);
    }
    return parsed.data.keys;
  }
  if (text.length < 16) throw new Error('proxy keys: a proxy key must be at least 16 characters');
  return [{ name: defaultName, key: text }];
}

export interface Config {
  /** `lambda` when running on AWS Lambda, `local` behind `bin/serve.ts` or in tests. */
  readonly runtime: 'lambda' | 'local';
  readonly defaultTimeoutSeconds: number;
  readonly maxTimeoutSeconds: number;
  /** Host names (with `*.` wildcards) and CIDRs that targets must match; see target policy. */
  readonly allowedTargets: readonly string[];
  readonly allowedDatabases: readonly string[];
  /** How v1 calls reach the ERP (`ERP_V1_TRANSPORT`). */
  readonly v1Transport: V1TransportMode;
  /** How v2 calls reach the ERP (`ERP_V2_TRANSPORT`). */
  readonly v2Transport: V2TransportMode;
  readonly stripDebug: boolean;
  readonly maxResponseBytes: number;
  readonly proxyKeysSecretId: string | undefined;
  readonly licenseSecretId: string | undefined;
  readonly licensePublicKey: string | undefined;
  readonly auxPublic: ReadonlySet<AuxPublicName>;
  readonly secretsMaxAgeSeconds: number;
  /**
   * Port of the Parameters and Secrets Lambda Extension (`PARAMETERS_SECRETS_EXTENSION_HTTP_PORT`):
   * when set, secrets are read through it, without the AWS SDK. Undefined: through the SDK.
   */
  readonly secretsExtensionPort: number | undefined;
  readonly metricsWindowSeconds: number;
  readonly metricsCacheSeconds: number;
  readonly logLevel: LogLevelName;
  readonly serviceName: string;
  readonly metricsNamespace: string;
  readonly port: number;
  readonly host: string;
  /** Keys from `PROXY_API_KEY` / `PROXY_API_KEYS` (local), or a generated one. */
  readonly localKeys: readonly NamedKey[];
  /** Set when no key was configured locally and one was generated for this process. */
  readonly generatedKey: string | undefined;
  readonly licenseFile: string | undefined;
  readonly functionName: string | undefined;
  readonly region: string | undefined;
  readonly buildCommit: string | undefined;
  readonly buildTime: string | undefined;
}

/** Loopback ranges the local server allows by default (docs/target-policy.md). */
export const LOCAL_DEFAULT_TARGETS = Object.freeze(['127.0.0.0/8', '::1/128', 'localhost']);

/** Parses a configuration from an environment. Throws an `Error` naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const runtime = e.AWS_LAMBDA_FUNCTION_NAME ? 'lambda' : 'local';

  let localKeys: NamedKey[] = [];
  let generatedKey: string | undefined;
  const keyVariables = (['PROXY_API_KEY', 'PROXY_API_KEYS', 'PROXY_KEYS_SECRET_ID'] as const).filter(
    (name) => e[name] !== undefined,
  );
  if (keyVariables.length > 1) {
    throw new Error(
      `Invalid configuration: ${keyVariables.join(' and ')} are set; each is a complete source of proxy keys, so set only one`,
    );
  }
  const keysFrom = (name: 'PROXY_API_KEY' | 'PROXY_API_KEYS', raw: string): NamedKey[] => {
    try {
      return parseProxyKeys(raw);
    } catch (error) {
      // parseProxyKeys promises messages without keys.
      const why = (error instanceof Error ? error.message : String(error)).replace(/^proxy keys: /, '');
      throw new Error(`Invalid configuration: ${name}: ${why}`);
    }
  };
  if (e.PROXY_API_KEYS) localKeys = keysFrom('PROXY_API_KEYS', e.PROXY_API_KEYS);
  else if (e.PROXY_API_KEY) localKeys = keysFrom('PROXY_API_KEY', e.PROXY_API_KEY);
  else if (runtime === 'local' && !e.PROXY_KEYS_SECRET_ID) {
    generatedKey = `local-${randomBytes(24).toString('base64url')}`;
    localKeys = [{ name: 'generated', key: generatedKey }];
  }

  // A bad verification key would otherwise refuse every call at run time: fail at cold start.
  if (e.LICENSE_PUBLIC_KEY !== undefined && parsePublicKey(e.LICENSE_PUBLIC_KEY) === undefined) {
    throw new Error('Invalid configuration: LICENSE_PUBLIC_KEY: not an Ed25519 public key (base64 or PEM)');
  }

  if (e.ERP_DEFAULT_TIMEOUT > e.ERP_MAX_TIMEOUT) {
    throw new Error(
      `Invalid configuration: ERP_DEFAULT_TIMEOUT (${e.ERP_DEFAULT_TIMEOUT}) is above ERP_MAX_TIMEOUT (${e.ERP_MAX_TIMEOUT})`,
    );
  }

  const allowedTargets =
    e.ERP_ALLOWED_TARGETS.length > 0
      ? e.ERP_ALLOWED_TARGETS
      : runtime === 'local'
        ? [...LOCAL_DEFAULT_TARGETS]
        : [];

  return Object.freeze({
    runtime,
    defaultTimeoutSeconds: e.ERP_DEFAULT_TIMEOUT,
    maxTimeoutSeconds: e.ERP_MAX_TIMEOUT,
    allowedTargets: Object.freeze(allowedTargets),
    allowedDatabases: Object.freeze(e.ERP_ALLOWED_DATABASES),
    v1Transport: e.ERP_V1_TRANSPORT,
    v2Transport: e.ERP_V2_TRANSPORT,
    stripDebug: e.ERP_STRIP_DEBUG,
    maxResponseBytes: e.MAX_RESPONSE_BYTES,
    proxyKeysSecretId: e.PROXY_KEYS_SECRET_ID,
    licenseSecretId: e.LICENSE_SECRET_ID,
    licensePublicKey: e.LICENSE_PUBLIC_KEY,
    auxPublic: new Set(e.AUX_PUBLIC),
    secretsMaxAgeSeconds: e.SECRETS_MAX_AGE,
    secretsExtensionPort: e.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT || undefined,
    metricsWindowSeconds: e.METRICS_WINDOW_SECONDS,
    metricsCacheSeconds: e.METRICS_CACHE_SECONDS,
    logLevel: e.POWERTOOLS_LOG_LEVEL ?? e.LOG_LEVEL ?? 'INFO',
    serviceName: e.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
    metricsNamespace: e.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
    port: e.PORT,
    host: e.HOST ?? '127.0.0.1',
    localKeys: Object.freeze(localKeys),
    generatedKey,
    licenseFile: e.LICENSE_FILE,
    functionName: e.AWS_LAMBDA_FUNCTION_NAME,
    region: e.AWS_REGION,
    buildCommit: e.BUILD_COMMIT,
    buildTime: e.BUILD_TIME,
  });
}

let cached: Config | undefined;

/** The process-wide configuration, parsed on first use (cold start) and then reused. */
export function getConfig(): Config {
  cached ??= loadConfig();
  return cached;
}
