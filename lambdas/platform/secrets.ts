/**
 * @module platform/secrets
 * Proxy keys and the license: from Secrets Manager through Powertools Parameters (cached for
 * `SECRETS_MAX_AGE`) when deployed, from the environment and `LICENSE_FILE` locally
 * (README, Configuration; docs/operators-license.md).
 *
 * Deployed, the reads go through the AWS Parameters and Secrets Lambda Extension (a localhost
 * HTTP API, see {@link ExtensionSecretsProvider}), so no AWS SDK is on the path: importing the
 * Secrets Manager client cost 75-110 ms of the first call even bundled (docs/deployment.md,
 * "Secrets and the AWS SDK"). Elsewhere, with a secret id but no extension, the SDK is used.
 *
 * A rotation in a secret (a proxy key added or removed, a new license) takes effect once the
 * cache entry is older than `SECRETS_MAX_AGE`, without a restart or a redeploy. Error messages
 * name the secret, never its content.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { readFile, type Stats, stat } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BaseProvider, DEFAULT_PROVIDERS } from '@aws-lambda-powertools/parameters/base';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { monotonicMs } from './clock.ts';
import { type Config, type NamedKey, parseProxyKeys, trimProxyKey } from './config.ts';
import { addUtcYears, daysUntil, evaluateLicense, type LicenseStatus } from './license.ts';
import { http } from './node-http.ts';

export type { LicenseStatus } from './license.ts';

export interface ProxyKeySource {
  /** The current proxy keys; a rotation shows up within the cache age. */
  getKeys(): Promise<readonly NamedKey[]>;
}

export interface LicenseSource {
  /** The license as it stands now (evaluated against today's UTC date on every call). */
  getLicense(): Promise<LicenseStatus>;
}

/** `licensee` of the license a local run uses when none is configured. */
export const DEVELOPMENT_LICENSEE = 'Development license (local, not for production)';

/** Connect and per-attempt limits for Secrets Manager calls (the SDK's own default is no limit). */
const SECRETS_CONNECT_TIMEOUT_MS = 1_500;
const SECRETS_REQUEST_TIMEOUT_MS = 3_000;

/**
 * A Powertools Parameters provider for Secrets Manager (caching, `maxAge`, `forceFetch` and
 * `clearCaches()` are Powertools' own) that loads the AWS SDK on its first fetch instead of at
 * import: the SDK costs about 150 ms of cold start on this class of machine, and a run whose keys
 * and license come from the environment never needs it. (Powertools' own `SecretsProvider`
 * imports the SDK at module load, and esbuild hoists that import to the top of the bundle.)
 *
 * Its client has timeouts: an unreachable endpoint (a VPC without an endpoint or NAT) fails the
 * read in a few seconds (-32603, logged) instead of hanging every call until Lambda times out.
 */
class LazySecretsProvider extends BaseProvider {
  #client: SecretsManagerClient | undefined;

  constructor() {
    super({});
  }

  protected async _get(name: string): Promise<string | Uint8Array | undefined> {
    const sdk = await import('@aws-sdk/client-secrets-manager');
    this.#client ??= new sdk.SecretsManagerClient({
      maxAttempts: 2,
      // Without throwOnRequestTimeout, current smithy handlers only log a warning when it passes.
      requestHandler: {
        connectionTimeout: SECRETS_CONNECT_TIMEOUT_MS,
        requestTimeout: SECRETS_REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
      },
    });
    const output = await this.#client.send(new sdk.GetSecretValueCommand({ SecretId: name }));
    return output.SecretString ?? output.SecretBinary;
  }

  protected _getMultiple(): Promise<Record<string, unknown> | undefined> {
    return Promise.reject(new Error('reading several secrets at once is not supported'));
  }
}

/**
 * Limit of one read through the extension, from the first request to the last byte of the answer,
 * the one retry below included (its own call to Secrets Manager stops at 3 s).
 */
const EXTENSION_REQUEST_TIMEOUT_MS = 5_000;

/**
 * How long to wait before asking again after the extension's "not ready" answer. It gives that
 * answer while it is still starting, on the first call of a new execution environment; the next
 * call succeeds (issue 24). Short: it is spent on a caller's first request.
 */
const EXTENSION_NOT_READY_RETRY_DELAY_MS = 100;

/**
 * The least time worth a second request: with less left of {@link EXTENSION_REQUEST_TIMEOUT_MS}
 * after the wait, the read fails at once instead of sending a request that cannot be answered.
 */
const EXTENSION_MIN_RETRY_MS = 500;

/**
 * What the extension answers while it is not ready: HTTP 400 with the plain-text body
 * `not ready to serve traffic, please wait` (seen in the field; AWS does not document it). Its
 * other 400s name a Secrets Manager error type (`ResourceNotFoundException`,
 * `AccessDeniedException`...), and a secret id, which they may echo, cannot contain a space.
 */
const EXTENSION_NOT_READY_TEXT = /\bnot ready to serve traffic\b/i;

/** Thrown for an extension answer other than 200; `name` is the Secrets Manager error type. */
export class SecretsExtensionError extends Error {
  readonly status: number;
  /** @param detail what the answer said, when it is not a Secrets Manager error (never the body). */
  constructor(status: number, type: string | undefined, detail?: string) {
    const what = type ?? detail;
    super(`the Parameters and Secrets extension answered HTTP ${status}${what ? ` (${what})` : ''}`);
    // ResourceNotFoundException and friends keep their Secrets Manager name, as with the SDK.
    this.name = type ?? 'SecretsExtensionError';
    this.status = status;
  }
}

/** The Secrets Manager error type in an extension error body, when it names one. */
function errorType(body: string): string | undefined {
  const match = /\b([A-Z][A-Za-z]{2,60}(?:Exception|Error))\b/.exec(body);
  return match?.[1];
}

/** The extension's localhost port, and the session token it requires of every read. */
interface ExtensionAddress {
  readonly port: number;
  /** `AWS_SESSION_TOKEN` (set by Lambda); `undefined` outside Lambda. */
  readonly sessionToken: string | undefined;
}

interface ExtensionAnswer {
  readonly status: number;
  readonly body: string;
}

/** Whether an answer is the extension's "not ready" (and not a Secrets Manager error). */
function isNotReadyAnswer(answer: ExtensionAnswer): boolean {
  return (
    answer.status === 400 &&
    EXTENSION_NOT_READY_TEXT.test(answer.body) &&
    errorType(answer.body) === undefined
  );
}

/**
 * One GET to the extension on `localhost`, where AWS documents it, failed after `timeoutMs`
 * whatever the extension does meanwhile. `node:http` and not `fetch`: the handlers load
 * `node:http` anyway, while the first `fetch` of a process loads Node's bundled undici, which
 * would add to every first call.
 */
function extensionGet(
  extension: ExtensionAddress,
  path: string,
  timeoutMs: number,
): Promise<ExtensionAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        host: 'localhost',
        port: extension.port,
        path,
        headers: { 'X-Aws-Parameters-Secrets-Token': extension.sessionToken ?? '' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', fail);
      },
    );
    const timer = setTimeout(() => {
      request.destroy(
        new Error(
          `no answer from the Parameters and Secrets extension in ${EXTENSION_REQUEST_TIMEOUT_MS} ms`,
        ),
      );
    }, timeoutMs).unref();
    function fail(error: Error): void {
      clearTimeout(timer);
      reject(error);
    }
    request.on('error', fail);
  });
}

/**
 * Reads through the extension, asking once more after its "not ready" answer: after
 * {@link EXTENSION_NOT_READY_RETRY_DELAY_MS}, with what is left of
 * {@link EXTENSION_REQUEST_TIMEOUT_MS}. Any other answer, and a second "not ready", is final.
 */
async function extensionGetOnceReady(extension: ExtensionAddress, path: string): Promise<ExtensionAnswer> {
  const deadline = monotonicMs() + EXTENSION_REQUEST_TIMEOUT_MS;
  const first = await extensionGet(extension, path, EXTENSION_REQUEST_TIMEOUT_MS);
  if (!isNotReadyAnswer(first)) return first;
  const left = deadline - monotonicMs() - EXTENSION_NOT_READY_RETRY_DELAY_MS;
  if (left < EXTENSION_MIN_RETRY_MS) return first;
  await sleep(EXTENSION_NOT_READY_RETRY_DELAY_MS);
  return extensionGet(extension, path, left);
}

/**
 * A Powertools Parameters provider that reads secrets through the AWS Parameters and Secrets
 * Lambda Extension: `GET http://localhost:<port>/secretsmanager/get?secretId=<id>` with the
 * function's session token in `X-Aws-Parameters-Secrets-Token`; the answer is Secrets
 * Manager's `GetSecretValue` output as JSON. The extension makes the signed call with the
 * function's role; this process needs neither the SDK nor credentials code.
 */
class ExtensionSecretsProvider extends BaseProvider {
  readonly #extension: ExtensionAddress;

  constructor(extension: ExtensionAddress) {
    super({});
    this.#extension = extension;
  }

  /** Whether this provider reads through `extension` (its port, with its session token). */
  readsThrough(extension: ExtensionAddress): boolean {
    return this.#extension.port === extension.port && this.#extension.sessionToken === extension.sessionToken;
  }

  protected async _get(name: string): Promise<string | Uint8Array | undefined> {
    const answer = await extensionGetOnceReady(
      this.#extension,
      `/secretsmanager/get?secretId=${encodeURIComponent(name)}`,
    );
    const { status, body } = answer;
    if (status !== 200) {
      // The body may echo the request; keep only the error type, never the text.
      throw new SecretsExtensionError(
        status,
        errorType(body) ?? (status === 404 ? 'ResourceNotFoundException' : undefined),
        isNotReadyAnswer(answer) ? 'not ready to serve traffic, also after one retry' : undefined,
      );
    }
    const output = JSON.parse(body) as { SecretString?: unknown; SecretBinary?: unknown };
    if (typeof output.SecretString === 'string') return output.SecretString;
    if (typeof output.SecretBinary === 'string') return Buffer.from(output.SecretBinary, 'base64');
    return undefined;
  }

  protected _getMultiple(): Promise<Record<string, unknown> | undefined> {
    return Promise.reject(new Error('reading several secrets at once is not supported'));
  }
}

/**
 * The shared provider, registered where Powertools' `clearCaches()` finds it: through the
 * extension when its port is configured, else through the SDK.
 */
function secretsProvider(extension: ExtensionAddress | undefined): BaseProvider {
  const existing = DEFAULT_PROVIDERS.secrets;
  if (extension !== undefined) {
    if (existing instanceof ExtensionSecretsProvider && existing.readsThrough(extension)) return existing;
    const provider = new ExtensionSecretsProvider(extension);
    DEFAULT_PROVIDERS.secrets = provider;
    return provider;
  }
  if (existing instanceof LazySecretsProvider) return existing;
  const provider = new LazySecretsProvider();
  DEFAULT_PROVIDERS.secrets = provider;
  return provider;
}

/** Where and how long secrets are read: the parts of the configuration `readSecretText` needs. */
interface SecretReadSettings {
  readonly maxAgeSeconds: number;
  /** The extension to read through; `undefined`: with the AWS SDK. */
  readonly extension: ExtensionAddress | undefined;
}

/** The settings of the configuration that say where and how long secrets are read. */
export type SecretSettings = Pick<
  Config,
  'secretsMaxAgeSeconds' | 'secretsExtensionPort' | 'awsSessionToken'
>;

/**
 * Where and how long secrets are read, from the configuration: the extension's port
 * (`PARAMETERS_SECRETS_EXTENSION_HTTP_PORT`) with the function's session token
 * (`AWS_SESSION_TOKEN`, which the extension requires of every read), both from the settings
 * catalogue like every other setting.
 */
function secretReadSettings(config: SecretSettings): SecretReadSettings {
  const port = config.secretsExtensionPort;
  return {
    maxAgeSeconds: config.secretsMaxAgeSeconds,
    extension: port === undefined ? undefined : { port, sessionToken: config.awsSessionToken },
  };
}

/**
 * Reads a secret's current value through the shared Parameters cache.
 * `undefined` when the secret has no value (no `AWSCURRENT` version, or an empty string).
 * Throws what Parameters throws (`GetParameterError`, with the SDK or extension error as `cause`).
 */
async function readSecretText(secretId: string, settings: SecretReadSettings): Promise<string | undefined> {
  const value: unknown = await secretsProvider(settings.extension).get(secretId, {
    maxAge: settings.maxAgeSeconds,
  });
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when a Parameters error comes from Secrets Manager's `ResourceNotFoundException`. */
function isNotFound(error: unknown): boolean {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 3;
    current = current.cause, depth++
  ) {
    if (current.name === 'ResourceNotFoundException') return true;
  }
  return false;
}

/**
 * A JSON (or text) document kept in a secret, parsed again only when its text changed, so that
 * what it parses to keeps its identity between rotations. `read()` throws a plain `Error` naming
 * the secret (`what` says which) when it cannot be read, is empty, or does not parse; the message
 * is `parse`'s (which must hold no secret), never the text.
 */
export function secretDocument<T>(
  config: SecretSettings,
  secretId: string,
  what: string,
  parse: (text: string) => T,
): { read(): Promise<T> } {
  const settings = secretReadSettings(config);
  let last: { readonly text: string; readonly value: T } | undefined;
  return {
    async read() {
      let text: string | undefined;
      try {
        text = await readSecretText(secretId, settings);
      } catch (error) {
        throw new Error(`${what} secret ${secretId} could not be read: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      if (text === undefined || text.trim() === '') throw new Error(`${what} secret ${secretId} is empty`);
      if (text === last?.text) return last.value;
      let value: T;
      try {
        value = parse(text);
      } catch (error) {
        // The parsers promise messages without secrets; keep only that message, not the text.
        throw new Error(
          `${what} secret ${secretId} is not usable: ${errorMessage(error).replace(/^[^:]+: /, '')}`,
        );
      }
      last = { text, value };
      return value;
    },
  };
}

/**
 * The proxy keys: from the secret `config.proxyKeysSecretId` when set (a plain string is one key
 * named `default`, JSON `{"keys":[{name,key,policy?}]}` several), otherwise `config.localKeys`.
 *
 * `getKeys()` throws a plain `Error` naming the secret when it cannot be read or parsed; the
 * message never contains a key.
 */
export function createProxyKeySource(config: Config): ProxyKeySource {
  const secretId = config.proxyKeysSecretId;
  if (secretId === undefined) {
    const keys = config.localKeys;
    return { getKeys: async () => keys };
  }
  const document = secretDocument(config, secretId, 'proxy keys', (text) =>
    Object.freeze(parseProxyKeys(text).map((k) => Object.freeze({ ...k }))),
  );
  return { getKeys: () => document.read() };
}

const digestCache = new WeakMap<readonly NamedKey[], readonly Buffer[]>();

function sha256(text: string): Buffer {
  // One-shot `hash` (Node 20.12+): no Hash object per call, unlike createHash().update().digest().
  return hash('sha256', text, 'buffer');
}

/**
 * Whether two texts are the same proxy key after {@link trimProxyKey}, compared in constant time
 * (both hashed to 32 bytes, so neither length leaks). An empty key matches nothing.
 *
 * @example
 * isSameProxyKey(' k-0123456789abcdef\n', 'k-0123456789abcdef') // true
 */
export function isSameProxyKey(a: string, b: string): boolean {
  const left = trimProxyKey(a);
  const right = trimProxyKey(b);
  const equal = timingSafeEqual(sha256(left), sha256(right));
  return equal && left !== '';
}

/**
 * Finds the proxy key a caller presented, in constant time: both sides are hashed to 32 bytes
 * (so lengths do not leak) and compared with `timingSafeEqual` against every key, without an
 * early exit (so the position of the match does not leak).
 *
 * @example
 * findCallerKey([{ name: 'billing', key: 'k'.repeat(32) }], event.headers['x-api-key'])?.name
 */
export function findCallerKey(
  keys: readonly NamedKey[],
  presented: string | undefined,
): NamedKey | undefined {
  let digests = digestCache.get(keys);
  // Key lists are frozen in practice; the length check only guards against a caller's mutable array.
  if (!digests || digests.length !== keys.length) {
    digests = keys.map((k) => sha256(k.key));
    digestCache.set(keys, digests);
  }
  // An absent header is compared too (as a digest no key has), so the work is the same.
  const trimmed = trimProxyKey(presented ?? '');
  const presentedDigest = sha256(trimmed);
  const hasPresented = trimmed.length > 0;
  let found: NamedKey | undefined;
  for (let i = 0; i < keys.length; i++) {
    const equal = timingSafeEqual(presentedDigest, digests[i] as Buffer);
    if (equal && hasPresented && found === undefined) found = keys[i];
  }
  return found;
}

/** The status for a license that is absent (never valid). */
function noLicense(reason: string): LicenseStatus {
  return { licensee: '', valid_until: '', is_valid: false, reason, days_left: null };
}

/**
 * A value the stack's placeholder could hold: nothing, `{}`, `null`, or text that is not even
 * an attempt at a JSON object (CDK fills a secret created without a value with a random string).
 */
function isPlaceholder(text: string): boolean {
  const trimmed = text.trim();
  return (
    trimmed === '' ||
    trimmed === 'null' ||
    trimmed === '""' ||
    !trimmed.startsWith('{') ||
    /^\{\s*\}$/.test(trimmed)
  );
}

/**
 * The license: from the secret `config.licenseSecretId` when set (through the same Parameters
 * cache as the proxy keys), else from the JSON file `config.licenseFile` (re-read when its
 * modification time or size changes). With neither, a local run gets a development license
 * valid for a year, and a Lambda run has no license (invalid, "no license configured").
 *
 * `getLicense()` answers invalid statuses for a missing, placeholder or malformed license, and
 * throws a plain `Error` naming the secret only when the secret cannot be read at all.
 */
export function createLicenseSource(config: Config): LicenseSource {
  const publicKey = config.licensePublicKey;
  const { licenseSecretId, licenseFile } = config;
  if (licenseSecretId !== undefined) {
    return secretLicenseSource(licenseSecretId, secretReadSettings(config), publicKey);
  }
  if (licenseFile !== undefined) return fileLicenseSource(licenseFile, publicKey);
  if (config.runtime === 'local') {
    return {
      async getLicense() {
        const now = new Date();
        const validUntil = addUtcYears(now, 1);
        return {
          licensee: DEVELOPMENT_LICENSEE,
          valid_until: validUntil,
          is_valid: true,
          days_left: daysUntil(validUntil, now),
        };
      },
    };
  }
  return { getLicense: async () => noLicense('no license configured') };
}

function secretLicenseSource(
  secretId: string,
  settings: SecretReadSettings,
  publicKey: string | undefined,
): LicenseSource {
  const { maxAgeSeconds } = settings;
  // The secret's ARN names the account: it goes to the operator docs and logs, not to clients.
  const placeholder =
    'no license configured: put the license JSON in the license secret (stack output LicenseSecretArn)';
  // Parameters does not cache "no value", so remember it here for the same age: otherwise every
  // request of an unlicensed deployment would call Secrets Manager.
  let absentUntil = 0;
  return {
    async getLicense() {
      if (Date.now() < absentUntil) return noLicense(placeholder);
      let text: string | undefined;
      try {
        text = await readSecretText(secretId, settings);
      } catch (error) {
        if (!isNotFound(error)) {
          throw new Error(`license secret ${secretId} could not be read: ${errorMessage(error)}`, {
            cause: error,
          });
        }
        text = undefined;
      }
      if (text === undefined) {
        absentUntil = Date.now() + maxAgeSeconds * 1000;
        return noLicense(placeholder);
      }
      if (isPlaceholder(text)) return noLicense(placeholder);
      return evaluateLicense(text, { publicKey, now: new Date() });
    },
  };
}

/*
 * `node:fs`'s callback functions (Node loads `node:fs` at startup), not `node:fs/promises`, which
 * loads ten more internal modules (its `readline` and the REPL's history among them), about 2.7 ms
 * of every cold start on Node 24 here, for a file only a local setup reads.
 */
function fileStat(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => {
    stat(path, (error, info) => (error ? reject(error) : resolve(info)));
  });
}

function fileText(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    readFile(path, 'utf8', (error, text) => (error ? reject(error) : resolve(text)));
  });
}

function fileLicenseSource(path: string, publicKey: string | undefined): LicenseSource {
  let cachedStamp: string | undefined;
  let cachedText = '';
  return {
    async getLicense() {
      try {
        const info = await fileStat(path);
        const stamp = `${info.mtimeMs}:${info.size}`;
        if (stamp !== cachedStamp) {
          cachedText = await fileText(path);
          cachedStamp = stamp;
        }
      } catch (error) {
        cachedStamp = undefined;
        const code = error instanceof Error && 'code' in error ? String(error.code) : errorMessage(error);
        // The path stays on the server: this reason is shown to every caller that is refused.
        return noLicense(`the license file (LICENSE_FILE) could not be read (${code})`);
      }
      return evaluateLicense(cachedText, { publicKey, now: new Date() });
    },
  };
}
