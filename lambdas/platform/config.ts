/**
 * @module platform/config
 * The service configuration, parsed once from the environment with the schemas of the settings
 * catalogue (`platform/settings.ts`). This is the only module that reads `process.env`. A bad
 * value fails fast at cold start with a message naming the variable and the problem.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { isAccessToken } from './bearer.ts';
import { compileKeyPolicy, type KeyPolicy, keyPolicySchema, strictObjectError } from './key-policy.ts';
import {
  LOCAL_DEFAULT_TARGETS,
  type LogLevelName,
  parseSettings,
  RUNTIME_SETTINGS,
  type RuntimeSettingValues,
  SETTING_RULES,
} from './settings.ts';
import { lazily } from './zod.ts';

export {
  DEFAULT_MAX_RESPONSE_BYTES,
  LAMBDA_RESPONSE_LIMIT_BYTES,
  LOCAL_DEFAULT_TARGETS,
  LOG_LEVELS,
  type LogLevelName,
} from './settings.ts';

/** A named proxy key (README, Configuration: `PROXY_API_KEYS`), with its own policy when it has one. */
export interface NamedKey {
  readonly name: string;
  readonly key: string;
  /** The key's policy (README, "Key policies"); absent: the key may do what the proxy allows. */
  readonly policy?: KeyPolicy;
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

/**
 * The message of a JSON value of the wrong type: zod's English one, word for word. No zod locale
 * is loaded (these schemas are `zod/mini` ones, as in core/schemas.ts), so the schemas carry
 * every message themselves.
 */
function wrongType(expected: string): (issue: z.core.$ZodRawIssue) => string {
  return (issue) => `Invalid input: expected ${expected}, received ${z.util.parsedType(issue.input)}`;
}

/**
 * The JSON form of the proxy keys, built on its first use: a function reads its keys from a
 * secret on its first request, and a plain key needs no schema at all.
 */
const proxyKeysSchema = lazily(() =>
  z.object(
    {
      keys: z
        .array(
          // Strict: a misspelt `policy` must fail, not leave the key unrestricted.
          z.strictObject(
            {
              name: z.string({ error: wrongType('string') }).check(z.minLength(1, 'each key needs a name')),
              key: z.pipe(
                z.pipe(z.string({ error: wrongType('string') }), z.transform(trimProxyKey)),
                z.string().check(z.minLength(16, 'a proxy key must be at least 16 characters')),
              ),
              policy: z.optional(keyPolicySchema()),
            },
            { error: strictObjectError(wrongType('object')) },
          ),
          { error: wrongType('array') },
        )
        // A name may repeat: a caller's old and new key during a rotation.
        .check(z.minLength(1, 'at least one key is needed')),
    },
    { error: wrongType('object') },
  ),
);

/**
 * One problem of a proxy-keys document, named by where it is: `keys.1.policy.access (key
 * "reporting"): expected "read" or "write"`. The key's name (when the entry has one) and the field, never the key
 * or the value found: zod/mini's messages here are the schema's own, and none quotes its input.
 */
function describeKeyIssue(json: unknown, issue: z.core.$ZodIssue): string {
  const [top, index] = issue.path;
  const where = issue.path.join('.') || 'document';
  if (top !== 'keys' || typeof index !== 'number') return `${where}: ${issue.message}`;
  const entry = (json as { keys: unknown[] }).keys[index];
  const name = (entry as { name?: unknown } | null)?.name;
  const named = typeof name === 'string' && name !== '' ? ` (key ${JSON.stringify(name.slice(0, 64))})` : '';
  return `${where}${named}: ${issue.message}`;
}

/**
 * Parses a proxy-keys document: either one plain key, or JSON `{"keys":[{name,key,policy?}]}` (each
 * policy compiled here, once).
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
    const parsed = proxyKeysSchema().safeParse(json);
    if (!parsed.success) {
      throw new Error(`proxy keys: ${parsed.error.issues.map((i) => describeKeyIssue(json, i)).join('; ')}`);
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
    for (const [index, entry] of parsed.data.keys.entries())
      if (isAccessToken(entry.key))
        throw new Error(
          `proxy keys: keys.${index} (key ${JSON.stringify(entry.name.slice(0, 64))}) has the shape of a JWT, which /mcp reads as an OAuth access token: choose another key`,
        );
    return parsed.data.keys.map(({ name, key, policy }) =>
      policy === undefined ? { name, key } : { name, key, policy: compileKeyPolicy(policy) },
    );
  }
  if (text.length < 16) throw new Error('proxy keys: a proxy key must be at least 16 characters');
  if (isAccessToken(text))
    throw new Error(
      'proxy keys: the key has the shape of a JWT, which /mcp reads as an OAuth access token: choose another key',
    );
  return [{ name: defaultName, key: text }];
}

/** The catalogue's values that reach `Config` as they are (the rest are combined below). */
type DirectSettings = Omit<
  RuntimeSettingValues,
  'proxyApiKey' | 'proxyApiKeys' | 'logLevel' | 'powertoolsLogLevel' | 'allowedTargets' | 'allowedDatabases'
>;

/**
 * The configuration: each setting of the catalogue under its name there (`platform/settings.ts`
 * says what each means), and what is combined from several.
 */
export interface Config extends DirectSettings {
  /** `lambda` when running on AWS Lambda, `local` behind `bin/serve.ts` or in tests. */
  readonly runtime: 'lambda' | 'local';
  /** `ERP_ALLOWED_TARGETS`, or the local default (loopback) when unset on a local run. */
  readonly allowedTargets: readonly string[];
  readonly allowedDatabases: readonly string[];
  /** `POWERTOOLS_LOG_LEVEL`, else `LOG_LEVEL`, else `INFO`. */
  readonly logLevel: LogLevelName;
  /** Keys from `PROXY_API_KEY` / `PROXY_API_KEYS` (local), or a generated one. */
  readonly localKeys: readonly NamedKey[];
  /** Set when no key was configured locally and one was generated for this process. */
  readonly generatedKey: string | undefined;
}

/** Parses a configuration from an environment. Throws an `Error` naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = parseSettings(RUNTIME_SETTINGS, 'env', (name) => env[name]);
  const envName = (key: keyof RuntimeSettingValues): string => RUNTIME_SETTINGS[key].env;
  const problems = [...parsed.problems];
  if (problems.length === 0) {
    for (const rule of SETTING_RULES) {
      const problem = rule(parsed.values, envName);
      if (problem !== undefined) problems.push(problem);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  // Every setting parsed (no problem): each value is there, its default applied.
  const e = parsed.values as RuntimeSettingValues;
  const runtime = e.functionName ? 'lambda' : 'local';

  let localKeys: NamedKey[] = [];
  let generatedKey: string | undefined;
  const keySources = (['proxyApiKey', 'proxyApiKeys', 'proxyKeysSecretId'] as const).filter(
    (key) => e[key] !== undefined,
  );
  if (keySources.length > 1) {
    throw new Error(
      `Invalid configuration: ${keySources.map(envName).join(' and ')} are set; each is a complete source of proxy keys, so set only one`,
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
  if (e.proxyApiKeys) localKeys = keysFrom('PROXY_API_KEYS', e.proxyApiKeys);
  else if (e.proxyApiKey) localKeys = keysFrom('PROXY_API_KEY', e.proxyApiKey);
  else if (runtime === 'local' && !e.proxyKeysSecretId) {
    generatedKey = `local-${randomBytes(24).toString('base64url')}`;
    localKeys = [{ name: 'generated', key: generatedKey }];
  }

  const {
    proxyApiKey: _key,
    proxyApiKeys: _keys,
    logLevel,
    powertoolsLogLevel,
    allowedTargets,
    ...direct
  } = e;
  return Object.freeze({
    ...direct,
    runtime,
    allowedTargets: Object.freeze(
      allowedTargets.length > 0 ? allowedTargets : runtime === 'local' ? [...LOCAL_DEFAULT_TARGETS] : [],
    ),
    allowedDatabases: Object.freeze(e.allowedDatabases),
    // Powertools' own variable wins over LOG_LEVEL, as in Powertools itself.
    logLevel: powertoolsLogLevel ?? logLevel,
    localKeys: Object.freeze(localKeys),
    generatedKey,
  });
}

let cached: Config | undefined;

/** The process-wide configuration, parsed on first use (cold start) and then reused. */
export function getConfig(): Config {
  cached ??= loadConfig();
  return cached;
}
