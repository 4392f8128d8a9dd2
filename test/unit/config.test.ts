/**
 * Configuration from the environment: defaults (local and Lambda), readable failures that name
 * the variable, and proxy-key documents whose errors never contain a key.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  LAMBDA_RESPONSE_LIMIT_BYTES,
  LOCAL_DEFAULT_TARGETS,
  loadConfig,
  parseProxyKeys,
} from '../../lambdas/platform/config.ts';
import { generateKeyPair } from '../../lambdas/platform/license.ts';
import { findCallerKey } from '../../lambdas/platform/secrets.ts';

/** Test keys (not secrets); listed in the leak guard's known secrets. */
const BILLING_KEY = 'billing-key-0123456789';
const CRM_KEY = 'crm-key-0123456789abcd';

const LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-execute-v1', PROXY_KEYS_SECRET_ID: 'erp-proxy/keys' };

/** The message of what `fn` threw (fails the test when it did not throw). */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('loadConfig defaults', () => {
  it('runs locally with the documented defaults', () => {
    // Act
    const config = loadConfig({});
    // Assess
    expect(config.runtime).toBe('local');
    expect(config.defaultTimeoutSeconds).toBe(15);
    expect(config.maxTimeoutSeconds).toBeGreaterThanOrEqual(15);
    expect(config.port).toBe(8787);
    expect(config.host).toBe('127.0.0.1');
    expect(config.allowedTargets).toEqual(LOCAL_DEFAULT_TARGETS);
    expect(config.allowedDatabases).toEqual([]);
    expect(config.stripDebug).toBe(false);
    expect(config.maxResponseBytes).toBe(DEFAULT_MAX_RESPONSE_BYTES);
    expect(config.auxPublic.size).toBe(0);
    expect(config.secretsMaxAgeSeconds).toBe(300);
    expect(config.logLevel).toBe('INFO');
    expect(config.serviceName).toBe('erp-proxy');
    expect(config.metricsNamespace).toBe('ErpProxy');
  });

  it('sizes the default response limit so that a fully escaped answer still fits 6 MB', () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES * 2).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  });

  it('generates a key locally when none is configured', () => {
    // Act
    const first = loadConfig({});
    const second = loadConfig({});
    // Assess
    expect(first.generatedKey).toMatch(/^local-[A-Za-z0-9_-]{32}$/);
    expect(first.localKeys).toEqual([{ name: 'generated', key: first.generatedKey }]);
    expect(second.generatedKey).not.toBe(first.generatedKey);
  });

  it('does not generate a key locally when a keys secret is configured', () => {
    const config = loadConfig({ PROXY_KEYS_SECRET_ID: 'erp-proxy/keys' });
    expect(config.generatedKey).toBeUndefined();
    expect(config.localKeys).toEqual([]);
  });

  it('on Lambda: no generated key and no default targets', () => {
    const config = loadConfig(LAMBDA);
    expect(config.runtime).toBe('lambda');
    expect(config.functionName).toBe('erp-proxy-execute-v1');
    expect(config.generatedKey).toBeUndefined();
    expect(config.localKeys).toEqual([]);
    expect(config.allowedTargets).toEqual([]);
  });

  it('on Lambda without a keys secret: still no generated key', () => {
    const config = loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'fn' });
    expect(config.generatedKey).toBeUndefined();
  });

  it('uses PROXY_API_KEY locally, not a generated key', () => {
    const config = loadConfig({ PROXY_API_KEY: BILLING_KEY });
    expect(config.generatedKey).toBeUndefined();
    expect(config.localKeys).toEqual([{ name: 'default', key: BILLING_KEY }]);
  });

  it('reads PROXY_API_KEYS', () => {
    const config = loadConfig({ PROXY_API_KEYS: JSON.stringify({ keys: [{ name: 'crm', key: CRM_KEY }] }) });
    expect(config.localKeys).toEqual([{ name: 'crm', key: CRM_KEY }]);
  });

  it('refuses two proxy-key sources at once instead of silently using one', () => {
    const keys = JSON.stringify({ keys: [{ name: 'crm', key: CRM_KEY }] });
    expect(() => loadConfig({ PROXY_API_KEY: BILLING_KEY, PROXY_API_KEYS: keys })).toThrow(
      'Invalid configuration: PROXY_API_KEY and PROXY_API_KEYS are set; each is a complete source of proxy keys, so set only one',
    );
    expect(() => loadConfig({ PROXY_API_KEY: BILLING_KEY, PROXY_KEYS_SECRET_ID: 'erp-proxy/keys' })).toThrow(
      /PROXY_API_KEY and PROXY_KEYS_SECRET_ID are set/,
    );
    // An empty variable counts as unset.
    expect(loadConfig({ PROXY_API_KEY: '', PROXY_API_KEYS: keys }).localKeys).toEqual([
      { name: 'crm', key: CRM_KEY },
    ]);
  });

  it('names the variable when a proxy key is unusable, never the key', () => {
    expect(() => loadConfig({ PROXY_API_KEY: 'short-key' })).toThrow(
      'Invalid configuration: PROXY_API_KEY: a proxy key must be at least 16 characters',
    );
    expect(() => loadConfig({ PROXY_API_KEYS: '{"keys":' })).toThrow(
      'Invalid configuration: PROXY_API_KEYS: the JSON form is not valid JSON',
    );
    // A name may repeat (a caller's old and new key side by side during a rotation).
    const rotating = loadConfig({
      PROXY_API_KEYS: JSON.stringify({
        keys: [
          { name: 'crm', key: CRM_KEY },
          { name: 'crm', key: BILLING_KEY },
        ],
      }),
    });
    expect(rotating.localKeys.map((k) => k.name)).toEqual(['crm', 'crm']);
  });

  it('takes the log level from POWERTOOLS_LOG_LEVEL first, then LOG_LEVEL, then INFO (as Powertools does)', () => {
    expect(loadConfig({}).logLevel).toBe('INFO');
    expect(loadConfig({ LOG_LEVEL: 'warn' }).logLevel).toBe('WARN');
    expect(loadConfig({ POWERTOOLS_LOG_LEVEL: 'debug', LOG_LEVEL: 'warn' }).logLevel).toBe('DEBUG');
    expect(loadConfig({ POWERTOOLS_LOG_LEVEL: ' ', LOG_LEVEL: 'error' }).logLevel).toBe('ERROR');
    expect(messageOf(() => loadConfig({ POWERTOOLS_LOG_LEVEL: 'loud' }))).toMatch(
      /POWERTOOLS_LOG_LEVEL: expected one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT/,
    );
  });

  it('reads lists, flags and numbers', () => {
    // Act
    const config = loadConfig({
      ERP_DEFAULT_TIMEOUT: '20',
      ERP_MAX_TIMEOUT: ' 40 ',
      ERP_ALLOWED_TARGETS: ' erp.example.com , *.odoo.com,,10.0.0.0/8 ',
      ERP_ALLOWED_DATABASES: 'erp_a,erp_b',
      ERP_STRIP_DEBUG: 'yes',
      AUX_PUBLIC: 'license, metrics',
      LOG_LEVEL: 'warn',
      PORT: '9000',
      HOST: '0.0.0.0',
    });
    // Assess
    expect(config.defaultTimeoutSeconds).toBe(20);
    expect(config.maxTimeoutSeconds).toBe(40);
    expect(config.allowedTargets).toEqual(['erp.example.com', '*.odoo.com', '10.0.0.0/8']);
    expect(config.allowedDatabases).toEqual(['erp_a', 'erp_b']);
    expect(config.stripDebug).toBe(true);
    expect([...config.auxPublic].sort()).toEqual(['license', 'metrics']);
    expect(config.logLevel).toBe('WARN');
    expect(config.port).toBe(9000);
    expect(config.host).toBe('0.0.0.0');
  });

  it('reads MCP_ALLOWED_ORIGINS as browsers send origins (none by default)', () => {
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    expect(
      loadConfig({
        MCP_ALLOWED_ORIGINS: ' https://agents.example.com , http://127.0.0.1:8080,HTTP://[::1]:3000',
      }).mcpAllowedOrigins,
    ).toEqual(['https://agents.example.com', 'http://127.0.0.1:8080', 'HTTP://[::1]:3000']);
  });

  it('replaces the local default targets when targets are configured', () => {
    const config = loadConfig({ ERP_ALLOWED_TARGETS: 'erp.example.com' });
    expect(config.allowedTargets).toEqual(['erp.example.com']);
  });

  it('treats empty values as unset', () => {
    const config = loadConfig({ PORT: '', ERP_DEFAULT_TIMEOUT: '  ', HOST: ' ', ERP_STRIP_DEBUG: '' });
    expect(config.port).toBe(8787);
    expect(config.defaultTimeoutSeconds).toBe(15);
    expect(config.host).toBe('127.0.0.1');
    expect(config.stripDebug).toBe(false);
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.allowedTargets)).toBe(true);
  });
});

describe('loadConfig failures name the variable', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT', 'an integer from 1 to 65535 (a port number), got "abc"'],
    [{ PORT: '0' }, 'PORT', 'an integer from 1 to 65535'],
    [{ PORT: '70000' }, 'PORT', '65535'],
    [{ ERP_MAX_TIMEOUT: '0' }, 'ERP_MAX_TIMEOUT', 'an integer from 1 to 900 seconds'],
    [{ ERP_MAX_TIMEOUT: '901' }, 'ERP_MAX_TIMEOUT', 'an integer from 1 to 900 seconds'],
    [{ ERP_DEFAULT_TIMEOUT: '-5' }, 'ERP_DEFAULT_TIMEOUT', 'an integer from 1 to 900'],
    [{ ERP_DEFAULT_TIMEOUT: '1.5' }, 'ERP_DEFAULT_TIMEOUT', 'an integer from 1 to 900'],
    [{ MAX_RESPONSE_BYTES: '1MB' }, 'MAX_RESPONSE_BYTES', 'an integer from 1024 to 6291456 bytes'],
    [{ MAX_RESPONSE_BYTES: '1000' }, 'MAX_RESPONSE_BYTES', 'an integer from 1024'],
    [{ ERP_V1_TRANSPORT: 'xmlrpc' }, 'ERP_V1_TRANSPORT', 'one of auto, json2, jsonrpc'],
    [{ ERP_ALLOWED_TARGETS: 'http://erp.example.com' }, 'ERP_ALLOWED_TARGETS', 'is not valid'],
    [{ ERP_ALLOWED_DATABASES: 'a b' }, 'ERP_ALLOWED_DATABASES', 'database names'],
    [{ AUX_PUBLIC: 'foo' }, 'AUX_PUBLIC', 'license'],
    [{ AUX_PUBLIC: 'license,about' }, 'AUX_PUBLIC', 'metrics'],
    [{ ERP_STRIP_DEBUG: 'maybe' }, 'ERP_STRIP_DEBUG', 'true or false'],
    [
      { MCP_ALLOWED_ORIGINS: 'https://app.example.com/' },
      'MCP_ALLOWED_ORIGINS',
      'scheme, host and port only',
    ],
    [{ MCP_ALLOWED_ORIGINS: 'app.example.com' }, 'MCP_ALLOWED_ORIGINS', 'is not valid'],
    [{ MCP_ALLOWED_ORIGINS: 'ftp://app.example.com' }, 'MCP_ALLOWED_ORIGINS', 'is not valid'],
    [{ MCP_ALLOWED_ORIGINS: 'https://app.example.com:443' }, 'MCP_ALLOWED_ORIGINS', 'is not valid'],
    [{ MCP_ALLOWED_ORIGINS: 'https://user@app.example.com' }, 'MCP_ALLOWED_ORIGINS', 'is not valid'],
    [{ LOG_LEVEL: 'LOUD' }, 'LOG_LEVEL', ''],
  ])('%j', (env, variable, hint) => {
    // Act
    const message = messageOf(() => loadConfig(env));
    // Assess
    expect(message).toMatch(/^Invalid configuration: /);
    expect(message).toContain(variable);
    expect(message).toContain(hint);
  });

  it('refuses an ERP_ALLOWED_TARGETS that lists nothing but separators, instead of falling back to the default', () => {
    for (const value of [' , ', ',', ' ,, , ']) {
      expect(() => loadConfig({ ERP_ALLOWED_TARGETS: value })).toThrow(
        /ERP_ALLOWED_TARGETS: lists nothing \(only commas and spaces\)/,
      );
    }
    // Empty (or blank) is unset, as for every variable.
    expect(loadConfig({ ERP_ALLOWED_TARGETS: '  ' }).allowedTargets).toContain('localhost');
  });

  it('names every bad variable at once', () => {
    const message = messageOf(() => loadConfig({ PORT: 'abc', ERP_MAX_TIMEOUT: '0' }));
    expect(message).toContain('PORT');
    expect(message).toContain('ERP_MAX_TIMEOUT');
  });

  it('refuses ERP_DEFAULT_TIMEOUT above ERP_MAX_TIMEOUT, with both values', () => {
    const message = messageOf(() => loadConfig({ ERP_DEFAULT_TIMEOUT: '30', ERP_MAX_TIMEOUT: '20' }));
    expect(message).toContain('ERP_DEFAULT_TIMEOUT (30)');
    expect(message).toContain('ERP_MAX_TIMEOUT (20)');
  });

  it('refuses a default above the default maximum', () => {
    const message = messageOf(() => loadConfig({ ERP_DEFAULT_TIMEOUT: '600' }));
    expect(message).toContain('ERP_DEFAULT_TIMEOUT (600) is above ERP_MAX_TIMEOUT');
  });

  it('refuses a short PROXY_API_KEY without showing it', () => {
    const shortKey = 'tooShort-Q7';
    const message = messageOf(() => loadConfig({ PROXY_API_KEY: shortKey }));
    expect(message).toMatch(/at least 16 characters/);
    expect(message).not.toContain(shortKey);
  });
});

describe('parseProxyKeys', () => {
  it('reads one plain key, trimmed, under the default name', () => {
    expect(parseProxyKeys(`  ${BILLING_KEY}\n`)).toEqual([{ name: 'default', key: BILLING_KEY }]);
    expect(parseProxyKeys(BILLING_KEY, 'billing')).toEqual([{ name: 'billing', key: BILLING_KEY }]);
  });

  it('reads named keys from JSON', () => {
    // Prepare
    const raw = JSON.stringify({
      keys: [
        { name: 'billing', key: BILLING_KEY },
        { name: 'crm', key: CRM_KEY },
      ],
    });
    // Act
    const keys = parseProxyKeys(raw);
    // Assess
    expect(keys).toEqual([
      { name: 'billing', key: BILLING_KEY },
      { name: 'crm', key: CRM_KEY },
    ]);
  });

  it.each([
    ['invalid JSON', `{"keys":[{"name":"billing","key":"${BILLING_KEY}"}`, 'not valid JSON'],
    ['no keys', '{"keys":[]}', 'at least one key'],
    ['a key without a name', `{"keys":[{"name":"","key":"${BILLING_KEY}"}]}`, 'needs a name'],
    ['a short named key', '{"keys":[{"name":"crm","key":"short-SECRET-1"}]}', 'at least 16 characters'],
    ['a key that is not a string', '{"keys":[{"name":"crm","key":12345678901234567890}]}', 'keys.0.key'],
    ['a plain key that is too short', 'short-SECRET-2', 'at least 16 characters'],
    ['nothing', '   ', 'at least 16 characters'],
  ])('refuses %s without showing a key', (_label, raw, expected) => {
    // Act
    const message = messageOf(() => parseProxyKeys(raw));
    // Assess
    expect(message).toMatch(/^proxy keys: /);
    expect(message).toContain(expected);
    for (const secret of [BILLING_KEY, 'short-SECRET', '12345678901234567890']) {
      expect(message).not.toContain(secret);
    }
  });

  it('refuses one key value under two names (or twice), naming the entries, never the key', () => {
    // Prepare
    const twoNames = JSON.stringify({
      keys: [
        { name: 'billing', key: BILLING_KEY },
        { name: 'crm', key: BILLING_KEY },
      ],
    });
    const twice = JSON.stringify({
      keys: [
        { name: 'crm', key: CRM_KEY },
        { name: 'billing', key: BILLING_KEY },
        { name: 'billing', key: BILLING_KEY },
      ],
    });
    // The same key once padded: the comparison trims stored keys as authentication trims presented ones.
    const padded = JSON.stringify({
      keys: [
        { name: 'billing', key: BILLING_KEY },
        { name: 'crm', key: ` ${BILLING_KEY}\n` },
      ],
    });
    // Act + Assess
    for (const [raw, entries] of [
      [twoNames, 'keys.0 and keys.1'],
      [twice, 'keys.1 and keys.2'],
      [padded, 'keys.0 and keys.1'],
    ] as const) {
      let message = '';
      try {
        parseProxyKeys(raw);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(`${entries} have the same key value`);
      expect(message).not.toContain(BILLING_KEY);
    }
    // A name may still repeat with different keys (a rotation).
    const rotation = JSON.stringify({
      keys: [
        { name: 'crm', key: CRM_KEY },
        { name: 'crm', key: BILLING_KEY },
      ],
    });
    expect(parseProxyKeys(rotation)).toHaveLength(2);
  });

  it('stores a key of the JSON form trimmed, so a secret value ending in a newline authenticates', () => {
    // Prepare
    const raw = JSON.stringify({ keys: [{ name: 'crm', key: `${CRM_KEY}\n` }] });
    // Act
    const keys = parseProxyKeys(raw);
    // Assess
    expect(keys).toEqual([{ name: 'crm', key: CRM_KEY }]);
    expect(findCallerKey(keys, CRM_KEY)?.name).toBe('crm');
    // Padding does not count towards the 16 characters.
    expect(() =>
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'a', key: ` ${'k'.repeat(15)} ` }] })),
    ).toThrow(/at least 16 characters/);
  });

  it('names the entry with the problem', () => {
    const raw = JSON.stringify({
      keys: [
        { name: 'billing', key: BILLING_KEY },
        { name: 'crm', key: 'short-SECRET-3' },
      ],
    });
    const message = messageOf(() => parseProxyKeys(raw));
    expect(message).toContain('keys.1.key');
    expect(message).not.toContain('short-SECRET-3');
  });
});

describe('LICENSE_PUBLIC_KEY', () => {
  it('is checked at cold start: a key that is not Ed25519 stops the service with a clear message', () => {
    expect(() => loadConfig({ LICENSE_PUBLIC_KEY: 'not-a-key' })).toThrow(
      /LICENSE_PUBLIC_KEY: expected an Ed25519 public key/,
    );
  });

  it('accepts the one-line base64 key the license CLI prints', () => {
    const { publicKeyBase64 } = generateKeyPair();
    expect(loadConfig({ LICENSE_PUBLIC_KEY: publicKeyBase64 }).licensePublicKey).toBe(publicKeyBase64);
  });
});

describe('OAuth settings and proxy keys of a JWT shape', () => {
  const jwtShaped = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.c2ln`;

  it('refuses a proxy key that /mcp would read as an access token, naming the key by its name only', () => {
    expect(messageOf(() => parseProxyKeys(jwtShaped))).toMatch(/shape of a JWT/);
    const message = messageOf(() =>
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'agents', key: jwtShaped }] })),
    );
    expect(message).toMatch(/keys\.0 \(key "agents"\) has the shape of a JWT/);
    expect(message).not.toContain(jwtShaped);
  });

  it('reads MCP_OAUTH_ISSUER and MCP_OAUTH_AUDIENCE as URLs (https, or http on loopback), refusing others', () => {
    const config = loadConfig({
      MCP_OAUTH_ISSUER: 'https://id.example.com,http://127.0.0.1:9000',
      MCP_OAUTH_AUDIENCE: 'https://erp-proxy.example.com/mcp',
    });
    expect(config.mcpOauthIssuers).toEqual(['https://id.example.com', 'http://127.0.0.1:9000']);
    expect(messageOf(() => loadConfig({ MCP_OAUTH_ISSUER: 'http://id.example.com' }))).toMatch(
      /MCP_OAUTH_ISSUER/,
    );
    expect(messageOf(() => loadConfig({ MCP_OAUTH_AUDIENCE: 'erp-proxy/mcp' }))).toMatch(
      /MCP_OAUTH_AUDIENCE/,
    );
  });
});
