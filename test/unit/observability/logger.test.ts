import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import {
  createLogger,
  isSecretKey,
  MAX_LOG_STRING_CHARS,
  MAX_LOGGED_VALUE_CHARS,
  REDACTED,
  redactSecrets,
  truncateForLog,
} from '../../../lambdas/platform/logger.ts';
import { captureOutputLines } from '../../support/captured-output.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('bounded log values', () => {
  it('truncateForLog keeps short values and cuts long ones, saying how much', () => {
    expect(truncateForLog('01J9Z3')).toBe('01J9Z3');
    expect(truncateForLog('x'.repeat(MAX_LOGGED_VALUE_CHARS))).toBe('x'.repeat(MAX_LOGGED_VALUE_CHARS));
    expect(truncateForLog('x'.repeat(3_000_000))).toBe(
      `${'x'.repeat(MAX_LOGGED_VALUE_CHARS)}…[2999744 more characters]`,
    );
  });

  it('redactSecrets cuts any string over the line bound, at any depth', () => {
    const long = 'y'.repeat(3_000_000);
    const text = JSON.stringify({ error: { message: long, stack: [long] }, short: 'ok' }, redactSecrets);
    expect(text.length).toBeLessThan(3 * MAX_LOG_STRING_CHARS);
    expect(JSON.parse(text).short).toBe('ok');
  });
});

describe('redactSecrets', () => {
  it('masks the listed keys whatever their case', () => {
    // Prepare
    const input = {
      api_key: 'a',
      APIKEY: 'b',
      'X-Api-Key': 'c',
      Authorization: 'bearer d',
      Password: 'e',
      signature: 'f',
      KEY: 'g',
      keys: [{ name: 'billing', key: 'h' }],
      Cookie: 'i',
      'Set-Cookie': 'j',
      model: 'res.partner',
    };

    // Act
    const output = JSON.parse(JSON.stringify(input, redactSecrets));

    // Assess
    expect(output).toEqual({
      api_key: REDACTED,
      APIKEY: REDACTED,
      'X-Api-Key': REDACTED,
      Authorization: REDACTED,
      Password: REDACTED,
      signature: REDACTED,
      KEY: REDACTED,
      keys: REDACTED,
      Cookie: REDACTED,
      'Set-Cookie': REDACTED,
      model: 'res.partner',
    });
  });

  it('masks anything matching secret or token, at any depth, inside arrays too', () => {
    const input = {
      level1: {
        level2: [
          { clientSecret: 's1', refresh_TOKEN: 't1', keep: 1 },
          [{ deep: { SECRET_VALUE: 's2', tokenCount: 3, harmless: 'ok' } }],
        ],
      },
      headers: { 'x-api-key': 'k1', accept: 'application/json' },
    };

    const text = JSON.stringify(input, redactSecrets);

    expect(text).not.toMatch(/s1|t1|s2|k1/);
    expect(JSON.parse(text)).toEqual({
      level1: {
        level2: [
          { clientSecret: REDACTED, refresh_TOKEN: REDACTED, keep: 1 },
          [{ deep: { SECRET_VALUE: REDACTED, tokenCount: REDACTED, harmless: 'ok' } }],
        ],
      },
      headers: { 'x-api-key': REDACTED, accept: 'application/json' },
    });
  });

  it('masks a secret key whose value is an object or array, wholesale', () => {
    const text = JSON.stringify({ auth: { password: { nested: 'p' } }, keys: ['a', 'b'] }, redactSecrets);
    expect(JSON.parse(text)).toEqual({ auth: { password: REDACTED }, keys: REDACTED });
  });

  it('leaves the root and ordinary keys alone', () => {
    expect(redactSecrets('', { a: 1 })).toEqual({ a: 1 });
    expect(isSecretKey('model')).toBe(false);
    expect(isSecretKey('caller')).toBe(false);
    expect(isSecretKey('erp_db')).toBe(false);
    expect(isSecretKey('monkey')).toBe(false);
    expect(isSecretKey('proxy_api_key')).toBe(true);
    expect(isSecretKey('db_password')).toBe(true);
  });
});

describe('createLogger', () => {
  it('redacts secrets in real log output at any depth, with service name and level from config', () => {
    // Prepare
    const output = captureOutputLines();
    const logger = createLogger({ ...loadConfig({ LOG_LEVEL: 'info' }), serviceName: 'erp-proxy-test' });

    // Act
    logger.info('hello', {
      headers: { 'X-API-KEY': 'super-secret-proxy-key', Host: 'h' },
      items: [{ Authorization: 'bearer upstream-key' }, { list: [{ api_key: 'erp-key-123' }] }],
    });
    logger.debug('not shown at INFO');

    // Assess
    const lines = output();
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(line).not.toContain('super-secret-proxy-key');
    expect(line).not.toContain('upstream-key');
    expect(line).not.toContain('erp-key-123');
    const parsed = JSON.parse(line);
    expect(parsed).toMatchObject({
      level: 'INFO',
      message: 'hello',
      service: 'erp-proxy-test',
      headers: { 'X-API-KEY': REDACTED, Host: 'h' },
      items: [{ Authorization: REDACTED }, { list: [{ api_key: REDACTED }] }],
    });
  });

  it('honours a WARN level', () => {
    const output = captureOutputLines();
    const logger = createLogger(loadConfig({ LOG_LEVEL: 'WARN' }));
    logger.info('hidden');
    logger.warn('shown');
    expect(output().map((line) => JSON.parse(line).message)).toEqual(['shown']);
  });
});
