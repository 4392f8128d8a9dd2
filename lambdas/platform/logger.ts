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

/** Whether a property name names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase()) || SECRET_KEY_PATTERN.test(key);
}

/**
 * A `JSON.stringify` replacer that masks the value of every secret-looking key. `JSON.stringify`
 * calls it for every property at every depth (array elements get their index as key, so objects
 * inside arrays are visited too); the root call has the key `''` and is left alone.
 *
 * @example
 * JSON.stringify({ headers: { 'X-Api-Key': 'k' }, items: [{ password: 'p' }] }, redactSecrets);
 * // '{"headers":{"X-Api-Key":"[REDACTED]"},"items":[{"password":"[REDACTED]"}]}'
 */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key === '' || value === undefined) return value;
  return isSecretKey(key) ? REDACTED : value;
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
