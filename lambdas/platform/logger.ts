/**
 * @module platform/logger
 * The service's Powertools Logger. Every line goes through `redactSecrets` (as the Logger's
 * `jsonReplacerFn`), so a secret-looking key is masked at any depth, in objects and in arrays,
 * whatever a caller passes in. Callers still never pass `params`, `kwargs`, results or bodies:
 * redaction is the safety net, not the policy.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from './config.ts';

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/** Keys masked whatever their case (compared lower-cased). */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'x-api-key',
  'authorization',
  'password',
  'signature',
  'key',
  'keys',
  'cookie',
  'set-cookie',
]);

/**
 * Keys masked when they contain one of these words. Beyond `secret` and `token`, this also
 * catches prefixed variants of the list above (`proxy_api_key`, `db_password`, `X-Api-Key`
 * spelled `x_api_key`), which a later caller could plausibly log.
 */
const SECRET_KEY_PATTERN = /secret|token|password|api[-_]?key/i;

/**
 * Longest caller-supplied value written into the request log line (envelope `id`, model, action,
 * host, database): the caller sends megabytes if it likes, and CloudWatch Logs refuses an event
 * over 256 KB.
 */
export const MAX_LOGGED_VALUE_CHARS = 256;
/**
 * Longest string in any log line, whatever wrote it (an error message, a stack): the backstop of
 * {@link MAX_LOGGED_VALUE_CHARS}, applied by {@link redactSecrets}.
 */
export const MAX_LOG_STRING_CHARS = 8192;

/**
 * `value` as a log line may hold it: its first `max` characters and how many were cut.
 *
 * @example
 * truncateForLog('x'.repeat(300)) // 256 x's, then '…[44 more characters]'
 */
export function truncateForLog(value: string, max: number = MAX_LOGGED_VALUE_CHARS): string {
  return value.length > max ? `${value.slice(0, max)}…[${value.length - max} more characters]` : value;
}

/** Whether a property name names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase()) || SECRET_KEY_PATTERN.test(key);
}

/**
 * A `JSON.stringify` replacer that masks the value of every secret-looking key and cuts every
 * string longer than {@link MAX_LOG_STRING_CHARS}. `JSON.stringify` calls it for every property
 * at every depth (array elements get their index as key, so objects inside arrays are visited
 * too); the root call has the key `''` and is left alone.
 *
 * @example
 * JSON.stringify({ headers: { 'X-Api-Key': 'k' }, items: [{ password: 'p' }] }, redactSecrets);
 * // '{"headers":{"X-Api-Key":"[REDACTED]"},"items":[{"password":"[REDACTED]"}]}'
 */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key === '' || value === undefined) return value;
  if (isSecretKey(key)) return REDACTED;
  return typeof value === 'string' ? truncateForLog(value, MAX_LOG_STRING_CHARS) : value;
}

/**
 * Creates the service's Logger: service name and level from config, secrets redacted.
 * Powertools writes to a private `Console` on stdout/stderr (the global console when
 * `POWERTOOLS_DEV` is set).
 */
export function createLogger(config: Pick<Config, 'serviceName' | 'logLevel'>): Logger {
  return new Logger({
    serviceName: config.serviceName,
    logLevel: config.logLevel,
    jsonReplacerFn: redactSecrets,
  });
}
