/**
 * @module platform/settings
 * The catalogue of settings: every setting the functions or the local server read, declared
 * once, with its environment name, its CDK context key (or why an operator cannot set it on a
 * deployed stack), its schema (zod: default, bounds and the message of a bad value), the
 * functions that read it and whether `GET /_/about` shows it. Its texts (a one-line meaning, the
 * default as the docs show it, why it is not deployable) only the docs read: they are in
 * `lib/setting-texts.ts`, out of the function bundles, under the same names.
 *
 * From this one list come:
 * - the runtime configuration (`platform/config.ts` parses the environment with these schemas);
 * - the stack's context parsing (`lib/stack-config.ts` parses CDK context with the same schemas,
 *   so a value the synth accepts is one the runtime accepts);
 * - each function's environment (only the settings that function reads, `lib/erp-proxy-stack.ts`);
 * - the settings of `GET /_/about`;
 * - the configuration tables of the README and docs/deployment.md (`npm run docs:settings`, with
 *   the texts of `lib/setting-texts.ts`, checked by test/infra/settings-catalogue.test.ts).
 *
 * The settings only the stack reads (memory, concurrency, alarms, VPC, ...) are the catalogue's
 * other half, `lib/stack-settings.ts`, built from the same parts; they stay out of the function
 * bundles. Adding a setting means adding one entry to one of the two (and, for a runtime setting,
 * its texts to `lib/setting-texts.ts`: the typecheck fails without them).
 *
 * The same schema parses an environment value (always text) and a context value (text from
 * `-c key=value`, or a number, boolean or array from cdk.json and the settings files).
 *
 * The schemas are `zod/mini` ones, as the request schemas (core/schemas.ts): every function
 * builds this catalogue at cold start, and zod's classic API, which puts its methods on every
 * schema object, made it about 12 ms of each cold start and 65 KB of each bundle. Each schema is
 * one transform over the value as given (the parts below): its messages are its own, never a zod
 * locale's.
 */
import { parsePublicKey } from './license.ts';
import { parseTargetLimits, type TargetLimits, targetLimitsText } from './limits.ts';
import {
  AUDIT_MODES,
  AUDIT_SEALING_MODES,
  AUX_PUBLIC_NAMES,
  type AuxPublicName,
  type FunctionName,
  METRICS_NAMESPACE,
  SERVICE_NAME,
  type SettingReader,
  V1_TRANSPORTS,
  type V1TransportMode,
  V2_TRANSPORTS,
  type V2TransportMode,
} from './names.ts';
import { EMBEDDED_STORE_ROOM } from './state/state-store.ts';
import { parseTargetList } from './target-list.ts';
import './zod.ts';
import * as z from 'zod/mini';

/** Lambda's synchronous response limit (6 MB), for the whole serialized response. */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;

/**
 * Default upstream read limit. The ERP answer is re-serialized into the envelope, and API
 * Gateway's payload is itself JSON, so the body string is escaped once more: every `"` and `\`
 * doubles. Half the Lambda limit, minus room for headers and the envelope, always fits.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = Math.floor(LAMBDA_RESPONSE_LIMIT_BYTES / 2) - 64 * 1024;

/** The log levels Powertools Logger knows, lowest first. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Where a local run seals its audit windows, and the key it signs them with (both git-ignored). */
export const LOCAL_AUDIT_DIR = '.erp-proxy/audit';
export const LOCAL_AUDIT_SEAL_KEY_FILE = '.erp-proxy/audit-seal-key.pem';

/** Loopback ranges the local server allows by default (docs/target-policy.md). */
export const LOCAL_DEFAULT_TARGETS = Object.freeze(['127.0.0.0/8', '::1/128', 'localhost']);

/**
 * Whether `text` is a web origin as a browser sends it in `Origin`: `http` or `https`, a host and
 * an optional port, nothing else (no path, query, user or trailing slash).
 */
export function isOrigin(text: string): boolean {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(text)) return false;
  try {
    return new URL(text).origin === text.toLowerCase();
  } catch {
    return false;
  }
}

// --- Parts every schema is built from -------------------------------------------------------

/** A value as given, with `undefined`, `null` and blank text all meaning "not set". */
function given(raw: unknown): unknown {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'string' && raw.trim() === '') return undefined;
  return raw;
}

/** `got "x"` for a message: the value as given, cut to a readable length. */
function shown(raw: unknown): string {
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** A parsed value, or what is wrong with it (one problem, or one per bad entry of a list). */
export type Parsed<T> = { readonly value: T } | { readonly problem: string | readonly string[] };

/** A setting's schema: parses a value as given (environment text or a context value) to a `T`. */
export type SettingSchema<T> = z.ZodMiniType<T>;

/**
 * `parse`'s value, or `z.NEVER` with each of its problems added to the parse as an issue of its
 * own (zod/mini hands a transform the parse payload itself: its issues are pushed there).
 */
function settle<T>(parsed: Parsed<T>, input: unknown, payload: z.core.ParsePayload): T {
  if (!('problem' in parsed)) return parsed.value;
  const { problem } = parsed;
  for (const message of typeof problem === 'string' ? [problem] : problem) {
    payload.issues.push({ code: 'custom', message, input });
  }
  return z.NEVER;
}

/**
 * A schema from a parse function over the given value (`undefined` when not set). The problem
 * becomes the issue's message; the caller prefixes the setting's name.
 */
export function settingSchema<T>(parse: (raw: unknown) => Parsed<T>): SettingSchema<T> {
  return z.transform((raw: unknown, payload) => settle(parse(given(raw)), raw, payload));
}

/** `schema`, then a further check or conversion of its value. */
export function checked<T, U>(schema: SettingSchema<T>, parse: (value: T) => Parsed<U>): SettingSchema<U> {
  return z.pipe(
    schema,
    z.transform((value: T, payload) => settle(parse(value), value, payload)),
  );
}

/** An integer in `[min, max]`: a number, or digits in text. */
export function integer(options: {
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
  readonly unit?: string;
}): SettingSchema<number>;
export function integer(options: {
  readonly fallback?: undefined;
  readonly min: number;
  readonly max: number;
  readonly unit?: string;
}): SettingSchema<number | undefined>;
export function integer(options: {
  readonly fallback?: number | undefined;
  readonly min: number;
  readonly max: number;
  readonly unit?: string;
}): SettingSchema<number | undefined> {
  const { fallback, min, max, unit = '' } = options;
  return settingSchema((raw) => {
    if (raw === undefined) return { value: fallback };
    const number = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
      return { problem: `expected an integer from ${min} to ${max}${unit}, got ${shown(raw)}` };
    }
    return { value: number };
  });
}

/** A number in `[min, max]` (decimals allowed): a number, or its text. */
export function decimal(options: {
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
}): SettingSchema<number> {
  const { fallback, min, max } = options;
  return settingSchema<number>((raw) => {
    if (raw === undefined) return { value: fallback };
    const number = typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof number !== 'number' || !Number.isFinite(number) || number < min || number > max) {
      return { problem: `expected a number from ${min} to ${max}, got ${shown(raw)}` };
    }
    return { value: number };
  });
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

/** true or false: a boolean, or `true`/`false`/`1`/`0`/`yes`/`no`/`on`/`off` in any case. */
export function flag(fallback: boolean): SettingSchema<boolean> {
  return settingSchema<boolean>((raw) => {
    if (raw === undefined) return { value: fallback };
    if (typeof raw === 'boolean') return { value: raw };
    const word = typeof raw === 'string' ? raw.trim().toLowerCase() : undefined;
    if (word !== undefined && TRUE_WORDS.has(word)) return { value: true };
    if (word !== undefined && FALSE_WORDS.has(word)) return { value: false };
    return { problem: `expected true or false, got ${shown(raw)}` };
  });
}

/** One of `values`, in any case. */
export function choice<const V extends string>(values: readonly V[], fallback: V): SettingSchema<V>;
export function choice<const V extends string>(
  values: readonly V[],
  fallback?: undefined,
): SettingSchema<V | undefined>;
export function choice<const V extends string>(
  values: readonly V[],
  fallback?: V,
): SettingSchema<V | undefined> {
  return settingSchema((raw) => {
    if (raw === undefined) return { value: fallback };
    const word = typeof raw === 'string' ? raw.trim() : undefined;
    const match = values.find((value) => value.toLowerCase() === word?.toLowerCase());
    if (match === undefined) return { problem: `expected one of ${values.join(', ')}, got ${shown(raw)}` };
    return { value: match };
  });
}

/** Text, trimmed; optionally checked (`expected` says what is wanted). Not set: `undefined`. */
export function text(
  options: { readonly expected?: string; readonly check?: (text: string) => boolean } = {},
): SettingSchema<string | undefined> {
  const { expected = 'text', check } = options;
  return settingSchema((raw) => {
    if (raw === undefined) return { value: undefined };
    if (typeof raw !== 'string' && typeof raw !== 'number') {
      return { problem: `expected ${expected}, got ${shown(raw)}` };
    }
    const value = String(raw).trim();
    if (check !== undefined && !check(value)) return { problem: `expected ${expected}, got ${shown(raw)}` };
    return { value };
  });
}

/** Text with a default. */
export function textOr(fallback: string): SettingSchema<string> {
  return z.pipe(
    text(),
    z.transform((value: string | undefined) => value ?? fallback),
  );
}

/**
 * A list: comma-separated text, or an array of strings. Given, but only separators and blanks
 * (`" , "`): a mistake, never a request for the default. Each entry optionally checked.
 */
export function list(
  options: { readonly expected?: string; readonly check?: (entry: string) => boolean } = {},
): SettingSchema<string[]> {
  const { expected = 'a comma-separated list', check } = options;
  return settingSchema<string[]>((raw) => {
    if (raw === undefined) return { value: [] };
    let entries: unknown[];
    if (typeof raw === 'string') entries = raw.split(',');
    else if (Array.isArray(raw)) entries = raw;
    else return { problem: `expected ${expected}, got ${shown(raw)}` };
    const texts: string[] = [];
    const problems: string[] = [];
    for (const entry of entries) {
      if (typeof entry !== 'string') {
        problems.push(`expected ${expected} (strings only), got ${shown(entry)}`);
        continue;
      }
      const trimmed = entry.trim();
      if (trimmed === '') continue;
      if (check !== undefined && !check(trimmed))
        problems.push(`"${trimmed}" is not valid; expected ${expected}`);
      else texts.push(trimmed);
    }
    if (problems.length > 0) return { problem: problems };
    if (texts.length === 0 && entries.length > 0) {
      return { problem: 'lists nothing (only commas and spaces); leave it out for the default' };
    }
    return { value: texts };
  });
}

// --- The catalogue entry ---------------------------------------------------------------------

/**
 * Why a runtime setting cannot be set by an operator on a deployed stack: the stack sets it
 * itself (`value`, when it is always the same), Lambda sets it, or it only means something to
 * the local server. The reason in words is the docs' (`why`, lib/setting-texts.ts).
 */
export interface NotDeployable {
  readonly by: 'stack' | 'lambda' | 'local';
  /** The value the stack always gives it, when fixed. */
  readonly value?: string;
}

/**
 * One setting of the catalogue: what the code needs of it. Its texts, which only the docs show,
 * are apart: lib/setting-texts.ts for a runtime setting, beside it for a stack one.
 */
export interface Setting<T = unknown> {
  /** The environment variable the code reads; absent for a setting only the stack reads. */
  readonly env?: string;
  /** The CDK context key an operator deploys it with; absent when it is {@link notDeployable}. */
  readonly context?: string;
  readonly notDeployable?: NotDeployable;
  /** Parses an environment or context value: default, bounds, the message of a bad value. */
  readonly schema: SettingSchema<T>;
  /**
   * Parses the context value where the deployed default differs from the local one (the local
   * server keeps {@link schema}'s): `ERP_STRIP_DEBUG` is on in the stack, off locally.
   */
  readonly contextSchema?: SettingSchema<T>;
  /** The functions whose code reads it (the local server runs them all). */
  readonly readBy: readonly SettingReader[];
  /** Shown under `settings` by `GET /_/about` (never a secret, never a target or database). */
  readonly about?: boolean;
}

/** The name a setting goes by in one source: its environment variable or its context key. */
export type SettingSource = 'env' | 'context';

const ALL: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'version', 'aux', 'mcp'];
/** The functions that call ERPs. */
const UPSTREAM: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'version', 'mcp'];
/** The functions that keep state in the store (docs/design.md, "The proxy's state: the store"): the only ones granted its table. */
export const STATEFUL_FUNCTIONS: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'mcp'];
const STATEFUL = STATEFUL_FUNCTIONS;

/** Whether the runtime accepts an `ERP_ALLOWED_TARGETS` entry (its own parser). */
/** An issuer identifier: an https URL without query or fragment (http only on a loopback host). */
function isIssuerUrl(entry: string): boolean {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return false;
  }
  if (url.search || url.hash || url.username) return false;
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  return url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
}

function isTargetPattern(entry: string): boolean {
  try {
    parseTargetList([entry]);
    return true;
  } catch {
    return false;
  }
}

const DATABASE_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * The settings the functions and the local server read, keyed by their name in `Config`.
 * Secrets never have a default shown, and never go to `/_/about`.
 */
export const RUNTIME_SETTINGS = Object.freeze({
  defaultTimeoutSeconds: {
    env: 'ERP_DEFAULT_TIMEOUT',
    context: 'defaultTimeout',
    schema: integer({ fallback: 15, min: 1, max: 900, unit: ' seconds' }),
    readBy: [...UPSTREAM, 'aux'],
    about: true,
  },
  maxTimeoutSeconds: {
    env: 'ERP_MAX_TIMEOUT',
    context: 'maxTimeout',
    schema: integer({ fallback: 25, min: 1, max: 900, unit: ' seconds' }),
    readBy: [...UPSTREAM, 'aux'],
    about: true,
  },
  allowedTargets: {
    env: 'ERP_ALLOWED_TARGETS',
    context: 'allowedTargets',
    schema: list({
      expected: 'host names (optionally starting with "*."), IP addresses or CIDRs, without scheme or port',
      check: isTargetPattern,
    }),
    readBy: UPSTREAM,
  },
  allowedDatabases: {
    env: 'ERP_ALLOWED_DATABASES',
    context: 'allowedDatabases',
    schema: list({ expected: 'database names', check: (name) => DATABASE_NAME.test(name) }),
    readBy: UPSTREAM,
  },
  v1Transport: {
    env: 'ERP_V1_TRANSPORT',
    context: 'v1Transport',
    schema: choice<V1TransportMode>(V1_TRANSPORTS, 'auto'),
    readBy: ['execute-v1', 'aux'],
    about: true,
  },
  v2Transport: {
    env: 'ERP_V2_TRANSPORT',
    context: 'v2Transport',
    schema: choice<V2TransportMode>(V2_TRANSPORTS, 'json2'),
    readBy: ['execute-v2', 'aux'],
    about: true,
  },
  mcpWriteTools: {
    env: 'MCP_WRITE_TOOLS',
    context: 'mcpWriteTools',
    schema: flag(false),
    readBy: ['mcp', 'aux'],
    about: true,
  },
  mcpOauthIssuers: {
    env: 'MCP_OAUTH_ISSUER',
    context: 'mcpOauthIssuers',
    schema: list({
      expected: 'issuer identifiers: https URLs (http only on loopback), exactly as the tokens name them',
      check: isIssuerUrl,
    }),
    readBy: ['mcp', 'aux'],
    about: true,
  },
  mcpOauthAudience: {
    env: 'MCP_OAUTH_AUDIENCE',
    context: 'mcpOauthAudience',
    schema: text({
      expected: 'the public URL of POST /mcp (https; http only on loopback)',
      check: isIssuerUrl,
    }),
    readBy: ['mcp'],
  },
  mcpOauthIdentitiesSecretId: {
    env: 'MCP_OAUTH_IDENTITIES_SECRET_ID',
    notDeployable: { by: 'stack' },
    schema: text(),
    readBy: ['mcp'],
  },
  mcpOauthIdentities: {
    env: 'MCP_OAUTH_IDENTITIES',
    notDeployable: { by: 'local' },
    schema: text(),
    readBy: [],
  },
  mcpAllowedOrigins: {
    env: 'MCP_ALLOWED_ORIGINS',
    context: 'mcpAllowedOrigins',
    schema: list({
      expected: 'origins such as https://app.example.com (scheme, host and port only)',
      check: isOrigin,
    }),
    readBy: ['mcp'],
  },
  targetLimits: {
    env: 'ERP_TARGET_LIMITS',
    context: 'targetLimits',
    schema: settingSchema<TargetLimits>((raw) =>
      raw === undefined ? { value: new Map() } : parseTargetLimits(raw),
    ),
    readBy: ['execute-v1', 'execute-v2', 'mcp', 'aux'],
  },
  stripDebug: {
    env: 'ERP_STRIP_DEBUG',
    context: 'stripDebug',
    schema: flag(false),
    // The ERP's tracebacks name its source paths and module versions: not for callers, once deployed
    // (docs/operators.md says how to turn it off while debugging).
    contextSchema: flag(true),
    readBy: ['execute-v1', 'execute-v2', 'aux'],
    about: true,
  },
  serverTiming: {
    env: 'SERVER_TIMING',
    context: 'serverTiming',
    schema: choice(['on', 'off'] as const, 'on'),
    readBy: ['execute-v1', 'execute-v2', 'mcp', 'aux'],
    about: true,
  },
  maxResponseBytes: {
    env: 'MAX_RESPONSE_BYTES',
    context: 'maxResponseBytes',
    schema: integer({
      fallback: DEFAULT_MAX_RESPONSE_BYTES,
      min: 1024,
      max: LAMBDA_RESPONSE_LIMIT_BYTES,
      unit: ' bytes',
    }),
    readBy: [...UPSTREAM, 'aux'],
    about: true,
  },
  proxyKeysSecretId: {
    env: 'PROXY_KEYS_SECRET_ID',
    notDeployable: { by: 'stack' },
    schema: text(),
    readBy: ALL,
  },
  licenseSecretId: {
    env: 'LICENSE_SECRET_ID',
    notDeployable: { by: 'stack' },
    schema: text(),
    readBy: ALL,
  },
  licensePublicKey: {
    env: 'LICENSE_PUBLIC_KEY',
    context: 'licensePublicKey',
    schema: text({
      expected: 'an Ed25519 public key (base64 or PEM, from npm run license -- keygen)',
      check: (key) => parsePublicKey(key) !== undefined,
    }),
    readBy: ALL,
  },
  licenseWarningDays: {
    env: 'LICENSE_WARNING_DAYS',
    context: 'licenseWarningDays',
    schema: integer({ fallback: 14, min: 1, max: 365, unit: ' days' }),
    readBy: ALL,
  },
  secretsMaxAgeSeconds: {
    env: 'SECRETS_MAX_AGE',
    context: 'secretsMaxAge',
    schema: integer({ fallback: 300, min: 1, max: 86_400, unit: ' seconds' }),
    readBy: ALL,
    about: true,
  },
  secretsExtensionPort: {
    env: 'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT',
    notDeployable: { by: 'stack', value: '2773' },
    schema: integer({ min: 1, max: 65_535, unit: ' (a port number)' }),
    readBy: ALL,
  },
  auxPublic: {
    env: 'AUX_PUBLIC',
    context: 'auxPublic',
    schema: z.pipe(
      list({
        expected: AUX_PUBLIC_NAMES.map((name) => `"${name}"`).join(' and/or '),
        check: (name) => (AUX_PUBLIC_NAMES as readonly string[]).includes(name),
      }),
      z.transform((names: string[]) => new Set(names as AuxPublicName[]) as ReadonlySet<AuxPublicName>),
    ),
    readBy: ['aux'],
    about: true,
  },
  metricsWindowSeconds: {
    env: 'METRICS_WINDOW_SECONDS',
    notDeployable: { by: 'stack', value: '300' },
    schema: integer({ fallback: 300, min: 60, max: 86_400, unit: ' seconds' }),
    readBy: ['aux'],
  },
  metricsCacheSeconds: {
    env: 'METRICS_CACHE_SECONDS',
    notDeployable: { by: 'stack', value: '60' },
    schema: integer({ fallback: 60, min: 1, max: 3_600, unit: ' seconds' }),
    readBy: ['aux'],
  },
  logLevel: {
    env: 'LOG_LEVEL',
    context: 'logLevel',
    schema: choice(LOG_LEVELS, 'INFO'),
    readBy: [...ALL, 'audit-sealer'],
  },
  powertoolsLogLevel: {
    env: 'POWERTOOLS_LOG_LEVEL',
    notDeployable: { by: 'stack' },
    schema: choice(LOG_LEVELS),
    readBy: [...ALL, 'audit-sealer'],
  },
  serviceName: {
    env: 'POWERTOOLS_SERVICE_NAME',
    notDeployable: { by: 'stack', value: SERVICE_NAME },
    schema: textOr(SERVICE_NAME),
    readBy: [...ALL, 'audit-sealer'],
  },
  metricsNamespace: {
    env: 'POWERTOOLS_METRICS_NAMESPACE',
    notDeployable: { by: 'stack', value: METRICS_NAMESPACE },
    schema: textOr(METRICS_NAMESPACE),
    readBy: [...ALL, 'audit-sealer'],
  },
  port: {
    env: 'PORT',
    notDeployable: { by: 'local' },
    schema: integer({ fallback: 8787, min: 1, max: 65_535, unit: ' (a port number)' }),
    readBy: [],
  },
  host: {
    env: 'HOST',
    notDeployable: { by: 'local' },
    schema: textOr('127.0.0.1'),
    readBy: [],
  },
  erpDoublePort: {
    env: 'ERP_DOUBLE_PORT',
    notDeployable: { by: 'local' },
    schema: integer({ fallback: 8788, min: 0, max: 65_535, unit: ' (a port number, 0: any free port)' }),
    readBy: [],
  },
  proxyApiKey: {
    env: 'PROXY_API_KEY',
    notDeployable: { by: 'local' },
    schema: text(),
    readBy: [],
  },
  proxyApiKeys: {
    env: 'PROXY_API_KEYS',
    notDeployable: { by: 'local' },
    schema: text(),
    readBy: [],
  },
  licenseFile: {
    env: 'LICENSE_FILE',
    notDeployable: { by: 'local' },
    schema: text(),
    readBy: [],
  },
  buildCommit: {
    env: 'BUILD_COMMIT',
    context: 'buildCommit',
    schema: text(),
    readBy: ['aux'],
  },
  buildTime: {
    env: 'BUILD_TIME',
    context: 'buildTime',
    schema: text(),
    readBy: ['aux'],
  },
  functionName: {
    env: 'AWS_LAMBDA_FUNCTION_NAME',
    notDeployable: { by: 'lambda' },
    schema: text(),
    readBy: ALL,
  },
  idempotencyTtlSeconds: {
    env: 'IDEMPOTENCY_TTL',
    context: 'idempotencyTtl',
    schema: integer({ fallback: 86_400, min: 60, max: 604_800, unit: ' seconds' }),
    readBy: [...STATEFUL, 'aux'],
    about: true,
  },
  confirmTtlSeconds: {
    env: 'CONFIRM_TTL',
    context: 'confirmTtl',
    schema: integer({ fallback: 600, min: 30, max: 3_600, unit: ' seconds' }),
    readBy: ['mcp', 'aux'],
    about: true,
  },
  brakesRefreshSeconds: {
    env: 'BRAKES_REFRESH',
    context: 'brakesRefresh',
    schema: integer({ fallback: 5, min: 1, max: 60, unit: ' seconds' }),
    readBy: ALL,
    about: true,
  },
  stateTable: {
    env: 'STATE_TABLE',
    notDeployable: { by: 'stack' },
    schema: text({
      expected: 'a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)',
      check: (name) => /^[A-Za-z0-9_.-]{3,255}$/.test(name),
    }),
    readBy: ALL,
  },
  audit: {
    env: 'AUDIT',
    context: 'audit',
    schema: choice(AUDIT_MODES, 'on'),
    readBy: [...STATEFUL, 'aux', 'audit-sealer'],
    about: true,
  },
  auditTable: {
    env: 'AUDIT_TABLE',
    notDeployable: { by: 'stack' },
    schema: text({
      expected: 'a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)',
      check: (name) => /^[A-Za-z0-9_.-]{3,255}$/.test(name),
    }),
    readBy: [...STATEFUL, 'aux', 'audit-sealer'],
  },
  auditRetentionDays: {
    env: 'AUDIT_RETENTION_DAYS',
    context: 'auditRetentionDays',
    schema: integer({ fallback: 400, min: 1, max: 3_653, unit: ' days' }),
    readBy: [...STATEFUL, 'aux', 'audit-sealer'],
    about: true,
  },
  auditPendingAfterSeconds: {
    env: 'AUDIT_PENDING_AFTER',
    notDeployable: { by: 'stack' },
    schema: integer({ min: 5, max: 3_600, unit: ' seconds' }),
    readBy: ['aux', 'audit-sealer'],
  },
  auditDigestSecretId: {
    env: 'AUDIT_DIGEST_SECRET_ID',
    notDeployable: { by: 'stack' },
    schema: text(),
    readBy: STATEFUL,
  },
  auditDigestKey: {
    env: 'AUDIT_DIGEST_KEY',
    notDeployable: { by: 'local' },
    // A key: a bad value is never shown in the message.
    schema: settingSchema((raw) => {
      if (raw === undefined) return { value: undefined };
      const key = typeof raw === 'string' ? raw.trim() : '';
      return key.length >= 32
        ? { value: key }
        : { problem: 'expected at least 32 characters (the value is not shown: it is a key)' };
    }),
    readBy: [],
  },
  auditSealing: {
    env: 'AUDIT_SEALING',
    context: 'auditSealing',
    schema: choice(AUDIT_SEALING_MODES, 'compliance'),
    readBy: ['audit-sealer', 'aux'],
    about: true,
  },
  auditSealMinutes: {
    env: 'AUDIT_SEAL_MINUTES',
    context: 'auditSealMinutes',
    schema: checked<number, number>(integer({ fallback: 5, min: 1, max: 60, unit: ' minutes' }), (minutes) =>
      60 % minutes === 0 ? { value: minutes } : { problem: `expected a divisor of 60, got ${minutes}` },
    ),
    readBy: ['audit-sealer', 'aux'],
    about: true,
  },
  auditLockDays: {
    env: 'AUDIT_LOCK_DAYS',
    context: 'auditLockDays',
    schema: integer({ min: 1, max: 3_653, unit: ' days' }),
    readBy: ['audit-sealer'],
  },
  auditBucket: {
    env: 'AUDIT_BUCKET',
    notDeployable: { by: 'stack' },
    schema: text({
      expected: 'an S3 bucket name',
      check: (name) => /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name),
    }),
    readBy: ['audit-sealer'],
  },
  auditSealKeyId: {
    env: 'AUDIT_SEAL_KEY_ID',
    notDeployable: { by: 'stack' },
    schema: text(),
    readBy: ['audit-sealer'],
  },
  auditDir: {
    env: 'AUDIT_DIR',
    notDeployable: { by: 'local' },
    schema: textOr(LOCAL_AUDIT_DIR),
    readBy: [],
  },
  auditSealKeyFile: {
    env: 'AUDIT_SEAL_KEY_FILE',
    notDeployable: { by: 'local' },
    schema: textOr(LOCAL_AUDIT_SEAL_KEY_FILE),
    readBy: [],
  },
  dynamodbEndpoint: {
    env: 'AWS_ENDPOINT_URL_DYNAMODB',
    notDeployable: { by: 'local' },
    schema: text({
      expected: 'an http or https URL, a path allowed (e.g. http://127.0.0.1:8000 for DynamoDB Local)',
      check: (url) => /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(url),
    }),
    readBy: [],
  },
  localStoreMaxBytes: {
    env: 'LOCAL_STORE_MAX_BYTES',
    notDeployable: { by: 'local' },
    schema: integer({
      fallback: EMBEDDED_STORE_ROOM.maxBytes,
      min: 4 * 1024 * 1024,
      max: 16 * 1024 * 1024 * 1024,
      unit: ' bytes',
    }),
    readBy: [],
  },
  localStoreMaxRecords: {
    env: 'LOCAL_STORE_MAX_RECORDS',
    notDeployable: { by: 'local' },
    schema: integer({ fallback: EMBEDDED_STORE_ROOM.maxRecords, min: 4, max: 10_000_000 }),
    readBy: [],
  },
  awsAccessKeyId: {
    env: 'AWS_ACCESS_KEY_ID',
    notDeployable: { by: 'lambda' },
    schema: text(),
    readBy: ALL,
  },
  awsSecretAccessKey: {
    env: 'AWS_SECRET_ACCESS_KEY',
    notDeployable: { by: 'lambda' },
    schema: text(),
    readBy: ALL,
  },
  awsSessionToken: {
    env: 'AWS_SESSION_TOKEN',
    notDeployable: { by: 'lambda' },
    schema: text(),
    readBy: ALL,
  },
  region: {
    env: 'AWS_REGION',
    notDeployable: { by: 'lambda' },
    schema: text(),
    readBy: ALL,
  },
} as const satisfies Record<string, Setting>);

export type RuntimeSettingName = keyof typeof RUNTIME_SETTINGS;

/** The value a setting parses to. */
export type SettingValue<S> = S extends { readonly schema: infer Z extends z.ZodMiniType }
  ? z.output<Z>
  : never;

/** Every runtime setting's value, defaults applied. */
export type RuntimeSettingValues = {
  readonly [K in RuntimeSettingName]: SettingValue<(typeof RUNTIME_SETTINGS)[K]>;
};

/** A setting's name in a source: its environment variable or its context key. */
export function settingName(setting: Setting, source: SettingSource): string | undefined {
  return source === 'env' ? setting.env : setting.context;
}

/**
 * Relations between settings, checked wherever they are parsed (runtime and synth alike); each
 * gets a namer for the source, so its message uses that source's names.
 */
export const SETTING_RULES: readonly ((
  values: Partial<RuntimeSettingValues>,
  name: (key: RuntimeSettingName) => string,
) => string | undefined)[] = [
  (values, name) =>
    values.defaultTimeoutSeconds !== undefined &&
    values.maxTimeoutSeconds !== undefined &&
    values.defaultTimeoutSeconds > values.maxTimeoutSeconds
      ? `${name('defaultTimeoutSeconds')} (${values.defaultTimeoutSeconds}) is above ${name('maxTimeoutSeconds')} (${values.maxTimeoutSeconds})`
      : undefined,
];

/**
 * Parses the settings of `catalogue` that have a name in `source`, reading each with `read`.
 * Returns the values (defaults applied) and every problem, each prefixed with the setting's
 * name in that source. A setting without a name in the source is left out.
 */
export function parseSettings<C extends Record<string, Setting>>(
  catalogue: C,
  source: SettingSource,
  read: (name: string) => unknown,
): { values: Partial<{ [K in keyof C]: SettingValue<C[K]> }>; problems: string[] } {
  const values: Partial<Record<keyof C, unknown>> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(catalogue) as [keyof C & string, Setting][]) {
    const name = settingName(setting, source);
    if (name === undefined) continue;
    const schema = source === 'context' ? (setting.contextSchema ?? setting.schema) : setting.schema;
    const parsed = schema.safeParse(read(name));
    if (parsed.success) values[key] = parsed.data;
    else problems.push(...parsed.error.issues.map((issue) => `${name}: ${issue.message}`));
  }
  return { values: values as Partial<{ [K in keyof C]: SettingValue<C[K]> }>, problems };
}

/** A setting's default as the docs show it: `defaultText` when given, else what its schema gives unset. */
export function defaultTextOf(setting: Setting, defaultText: string | undefined): string {
  if (defaultText !== undefined) return defaultText;
  const parsed = setting.schema.safeParse(undefined);
  return parsed.success && parsed.data !== undefined ? environmentText(parsed.data) : '';
}

/** A parsed value as environment text: a list or set comma-separated, anything else as text. */
export function environmentText(value: unknown): string {
  if (value instanceof Map) return value.size === 0 ? '' : targetLimitsText(value as TargetLimits);
  if (value instanceof Set) return [...value].join(',');
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

/**
 * The settings `GET /_/about` shows, by environment name: how this proxy behaves, never a
 * secret, a target or a database name.
 */
export function aboutSettings(
  values: Partial<Record<RuntimeSettingName, unknown>>,
): Record<string, string | number | boolean | string[]> {
  const shownSettings: Record<string, string | number | boolean | string[]> = {};
  for (const [key, setting] of Object.entries(RUNTIME_SETTINGS) as [RuntimeSettingName, Setting][]) {
    if (setting.about !== true || setting.env === undefined) continue;
    const value = values[key];
    if (value === undefined) continue;
    shownSettings[setting.env] =
      value instanceof Set ? [...value].map(String) : (value as string | number | boolean);
  }
  return shownSettings;
}
