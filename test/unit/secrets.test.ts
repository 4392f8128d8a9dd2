import { timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearCaches } from '@aws-lambda-powertools/parameters';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Config, loadConfig, type NamedKey } from '../../lambdas/platform/config.ts';
import { generateKeyPair, signLicense } from '../../lambdas/platform/license.ts';
import {
  createLicenseSource,
  createProxyKeySource,
  DEVELOPMENT_LICENSEE,
  findCallerKey,
  isSameProxyKey,
} from '../../lambdas/platform/secrets.ts';
import { createOAuthResourceServer } from '../../lambdas/protocol/oauth/resource-server.ts';

// A pass-through spy, to count the constant-time comparisons.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const KEYS_SECRET = 'erp-proxy/proxy-keys';
const LICENSE_SECRET = 'erp-proxy/license';
const BILLING = 'billing-key-0123456789abcdef';
const REPORTS = 'reports-key-0123456789abcdef';
const AUDIT = 'audit-key-0123456789abcdef-and-longer';

const sm = mockClient(SecretsManagerClient);

function lambdaConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-execute-v1', SECRETS_MAX_AGE: '300', ...env });
}

function keysDocument(...keys: NamedKey[]): string {
  return JSON.stringify({ keys });
}

function givenSecret(secretId: string, value: string): void {
  sm.on(GetSecretValueCommand, { SecretId: secretId }).resolves({ SecretString: value });
}

function secretCalls(secretId: string): number {
  return sm.commandCalls(GetSecretValueCommand, { SecretId: secretId }).length;
}

beforeEach(() => {
  sm.reset();
  clearCaches();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-15T10:00:00Z'));
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(() => {
  sm.restore();
});

describe('findCallerKey', () => {
  const keys: NamedKey[] = [
    { name: 'billing', key: BILLING },
    { name: 'reports', key: REPORTS },
    { name: 'audit', key: AUDIT },
  ];

  it.each([
    ['billing', BILLING],
    ['reports', REPORTS],
    ['audit', AUDIT],
  ])('finds the key named %s among several', (name, presented) => {
    // Act
    const found = findCallerKey(keys, presented);

    // Assess
    expect(found?.name).toBe(name);
  });

  it.each([
    ['a wrong key of the same length', BILLING.replace('billing', 'billinG')],
    ['a prefix of a key', BILLING.slice(0, -1)],
    ['a key with something appended', `${BILLING}x`],
    ['a much longer value', 'x'.repeat(10_000)],
    ['a one-character value', 'b'],
    ['an empty string', ''],
    ['a missing header', undefined],
  ])('finds nothing for %s', (_case, presented) => {
    // Act
    const found = findCallerKey(keys, presented);

    // Assess
    expect(found).toBeUndefined();
  });

  it('finds nothing when no key is configured', () => {
    expect(findCallerKey([], BILLING)).toBeUndefined();
  });

  it('compares 32-byte digests against every key, without stopping at the first match', () => {
    // Prepare
    const compare = vi.mocked(timingSafeEqual);
    compare.mockClear();

    // Act
    findCallerKey(keys, BILLING);
    findCallerKey(keys, 'x');
    findCallerKey(keys, undefined);

    // Assess: three comparisons per lookup, whether the first key matched, none did, or none was sent.
    expect(compare).toHaveBeenCalledTimes(9);
    for (const [a, b] of compare.mock.calls) {
      expect([Buffer.from(a as Uint8Array).length, Buffer.from(b as Uint8Array).length]).toEqual([32, 32]);
    }
  });
});

describe('isSameProxyKey', () => {
  it('compares after the trimming authentication applies, in constant time', () => {
    // Prepare
    const compare = vi.mocked(timingSafeEqual);
    compare.mockClear();
    // Act, Assess: a padded key is the key, on either side, as findCallerKey sees it.
    expect(isSameProxyKey(` ${BILLING} `, BILLING)).toBe(true);
    expect(isSameProxyKey(BILLING, `\t${BILLING}\r\n`)).toBe(true);
    expect(findCallerKey([{ name: 'billing', key: BILLING }], ` ${BILLING}\n`)?.name).toBe('billing');
    expect(isSameProxyKey(`${BILLING}x`, BILLING)).toBe(false);
    expect(isSameProxyKey(`b ${BILLING.slice(1)}`, BILLING)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(5);
  });

  it('never matches an empty or blank key', () => {
    expect(isSameProxyKey('', '')).toBe(false);
    expect(isSameProxyKey(' ', '\t')).toBe(false);
  });
});

describe('createProxyKeySource', () => {
  it('uses the local keys when no secret is configured', async () => {
    // Prepare
    const config = loadConfig({ PROXY_API_KEY: BILLING });

    // Act
    const keys = await createProxyKeySource(config).getKeys();

    // Assess
    expect(keys).toEqual([{ name: 'default', key: BILLING }]);
    expect(sm.calls()).toHaveLength(0);
  });

  it('reads a plain-string secret as one key named "default"', async () => {
    // Prepare
    givenSecret(KEYS_SECRET, `  ${BILLING}\n`);
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const keys = await source.getKeys();

    // Assess
    expect(keys).toEqual([{ name: 'default', key: BILLING }]);
  });

  it("keeps each key's policy from the secret (README, Key policies), and fails closed on a bad one", async () => {
    // Prepare
    givenSecret(
      KEYS_SECRET,
      JSON.stringify({
        keys: [
          { name: 'billing', key: BILLING },
          { name: 'reports', key: REPORTS, policy: { apis: ['v1'], access: 'read', models: ['sale.*'] } },
        ],
      }),
    );
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const keys = await source.getKeys();

    // Assess
    expect(findCallerKey(keys, BILLING)?.policy).toBeUndefined();
    const policy = findCallerKey(keys, REPORTS)?.policy;
    expect(policy?.access).toBe('read');
    expect([...(policy?.apis ?? [])]).toEqual(['v1']);
    expect(policy?.models?.prefixes).toEqual(['sale.']);

    // Act: a policy the schema does not know, in a new secret source.
    clearCaches();
    givenSecret(
      KEYS_SECRET,
      JSON.stringify({ keys: [{ name: 'reports', key: REPORTS, policy: { access: 'everything' } }] }),
    );
    const error = await createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }))
      .getKeys()
      .catch((e: unknown) => e);

    // Assess
    expect((error as Error).message).toBe(
      `proxy keys secret ${KEYS_SECRET} is not usable: keys.0.policy.access (key "reports"): expected "read" or "write"`,
    );
    expect((error as Error).message).not.toContain(REPORTS);
  });

  it('a deployed OAuth identity map with one bad entry is refused whole, naming the entry, never a key (issue 41)', async () => {
    // Prepare: an erp.url with a query string, which loaded before issue 41 and failed every call.
    const identitiesSecret = 'erp-proxy/oauth-identities';
    const erp = (url: string) => ({ url, db: 'prod', user_id: 7, api_key: REPORTS });
    givenSecret(
      identitiesSecret,
      JSON.stringify({
        identities: [
          { name: 'sales', match: { claim: 'groups', value: 'sales' }, erp: erp('https://erp.example.com') },
          {
            name: 'ops',
            match: { claim: 'groups', value: 'ops' },
            erp: erp('https://erp.example.com/?db=prod'),
          },
        ],
      }),
    );
    const server = createOAuthResourceServer(
      lambdaConfig({
        MCP_OAUTH_ISSUER: 'https://login.example.com',
        MCP_OAUTH_AUDIENCE: 'https://erp-proxy.example.com/mcp',
        MCP_OAUTH_IDENTITIES_SECRET_ID: identitiesSecret,
      }),
    );

    // Act
    const error = await server?.getIdentities().catch((e: unknown) => e);

    // Assess
    expect((error as Error).message).toBe(
      `OAuth identities secret ${identitiesSecret} is not usable: identities.1.erp.url (identity "ops"): must be a base URL, without query or fragment`,
    );
    expect((error as Error).message).not.toContain(REPORTS);
  });

  it('reads named keys from the JSON form, and caches them for SECRETS_MAX_AGE', async () => {
    // Prepare
    givenSecret(
      KEYS_SECRET,
      keysDocument({ name: 'billing', key: BILLING }, { name: 'reports', key: REPORTS }),
    );
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const first = await source.getKeys();
    const second = await source.getKeys();

    // Assess
    expect(first.map((k) => k.name)).toEqual(['billing', 'reports']);
    expect(second).toBe(first);
    expect(secretCalls(KEYS_SECRET)).toBe(1);
  });

  it('sees a key added and a key removed once the cache age has passed, and not before', async () => {
    // Prepare
    givenSecret(
      KEYS_SECRET,
      keysDocument({ name: 'billing', key: BILLING }, { name: 'reports', key: REPORTS }),
    );
    const source = createProxyKeySource(
      lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET, SECRETS_MAX_AGE: '60' }),
    );
    expect(findCallerKey(await source.getKeys(), REPORTS)?.name).toBe('reports');

    // Act: rotate (reports removed, audit added) in the secret.
    givenSecret(KEYS_SECRET, keysDocument({ name: 'billing', key: BILLING }, { name: 'audit', key: AUDIT }));
    vi.setSystemTime(new Date('2026-01-15T10:00:59Z'));
    const beforeExpiry = await source.getKeys();
    vi.setSystemTime(new Date('2026-01-15T10:01:01Z'));
    const afterExpiry = await source.getKeys();

    // Assess
    expect(findCallerKey(beforeExpiry, REPORTS)?.name).toBe('reports');
    expect(findCallerKey(beforeExpiry, AUDIT)).toBeUndefined();
    expect(findCallerKey(afterExpiry, REPORTS)).toBeUndefined();
    expect(findCallerKey(afterExpiry, AUDIT)?.name).toBe('audit');
    expect(findCallerKey(afterExpiry, BILLING)?.name).toBe('billing');
    expect(secretCalls(KEYS_SECRET)).toBe(2);
  });

  it('throws an Error naming the secret, never a key, when the secret cannot be parsed', async () => {
    // Prepare
    givenSecret(KEYS_SECRET, JSON.stringify({ keys: [{ name: 'billing', key: 'short-secret' }] }));
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const error = await source.getKeys().catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      `proxy keys secret ${KEYS_SECRET} is not usable: keys.0.key (key "billing"): a proxy key must be at least 16 characters`,
    );
    expect((error as Error).message).not.toContain('short-secret');
  });

  it.each([
    ['broken JSON', `{"keys":[{"name":"billing","key":"${BILLING}"`, 'the JSON form is not valid JSON'],
    ['a short plain key', 'tooshort', 'a proxy key must be at least 16 characters'],
  ])('reports %s without the secret text', async (_case, value, why) => {
    // Prepare
    givenSecret(KEYS_SECRET, value);
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const error = await source.getKeys().catch((e: unknown) => e);

    // Assess
    expect((error as Error).message).toBe(`proxy keys secret ${KEYS_SECRET} is not usable: ${why}`);
    expect((error as Error).message).not.toContain(BILLING);
  });

  it('throws an Error naming the secret when Secrets Manager fails, and retries on the next call', async () => {
    // Prepare
    sm.on(GetSecretValueCommand, { SecretId: KEYS_SECRET })
      .rejectsOnce(new Error('AccessDeniedException: not authorized'))
      .resolves({ SecretString: BILLING });
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act
    const error = await source.getKeys().catch((e: unknown) => e);
    const keys = await source.getKeys();

    // Assess
    expect((error as Error).message).toBe(
      `proxy keys secret ${KEYS_SECRET} could not be read: AccessDeniedException: not authorized`,
    );
    expect(keys).toEqual([{ name: 'default', key: BILLING }]);
  });

  it('throws when the secret is empty', async () => {
    // Prepare
    givenSecret(KEYS_SECRET, '');
    const source = createProxyKeySource(lambdaConfig({ PROXY_KEYS_SECRET_ID: KEYS_SECRET }));

    // Act / Assess
    await expect(source.getKeys()).rejects.toThrow(`proxy keys secret ${KEYS_SECRET} is empty`);
  });
});

describe('createLicenseSource: Secrets Manager', () => {
  const pair = generateKeyPair();

  it('evaluates the license in the secret, signature included', async () => {
    // Prepare
    givenSecret(LICENSE_SECRET, JSON.stringify(signLicense('ACME', '2026-12-31', pair.privateKeyPem)));
    const config = lambdaConfig({
      LICENSE_SECRET_ID: LICENSE_SECRET,
      LICENSE_PUBLIC_KEY: pair.publicKeyBase64,
    });

    // Act
    const status = await createLicenseSource(config).getLicense();

    // Assess
    expect(status).toEqual({ licensee: 'ACME', valid_until: '2026-12-31', is_valid: true, days_left: 350 });
  });

  it('sees a renewed license once the cache age has passed, and not before', async () => {
    // Prepare: two minutes before the end of the license's last day.
    vi.setSystemTime(new Date('2026-01-15T23:58:00Z'));
    givenSecret(LICENSE_SECRET, JSON.stringify(signLicense('ACME', '2026-01-15', pair.privateKeyPem)));
    const config = lambdaConfig({
      LICENSE_SECRET_ID: LICENSE_SECRET,
      LICENSE_PUBLIC_KEY: pair.publicKeyPem,
      SECRETS_MAX_AGE: '300',
    });
    const source = createLicenseSource(config);
    expect(await source.getLicense()).toMatchObject({ is_valid: true, days_left: 0 });

    // Act
    givenSecret(LICENSE_SECRET, JSON.stringify(signLicense('ACME', '2027-01-15', pair.privateKeyPem)));
    vi.setSystemTime(new Date('2026-01-16T00:02:59Z'));
    const stale = await source.getLicense();
    vi.setSystemTime(new Date('2026-01-16T00:03:01Z'));
    const renewed = await source.getLicense();

    // Assess: the expiry is judged on every call, the cached document is replaced after the cache age.
    expect(stale).toMatchObject({ is_valid: false, reason: 'license expired on 2026-01-15' });
    expect(renewed).toMatchObject({ is_valid: true, valid_until: '2027-01-15', days_left: 364 });
  });

  it.each([
    ['an empty string', ''],
    ['an empty object', '{}'],
    ['a random placeholder string', 'Xq3$randomly-generated-by-cdk'],
  ])('treats %s as no license configured', async (_case, value) => {
    // Prepare
    givenSecret(LICENSE_SECRET, value);
    const source = createLicenseSource(lambdaConfig({ LICENSE_SECRET_ID: LICENSE_SECRET }));

    // Act
    const status = await source.getLicense();

    // Assess
    expect(status).toEqual({
      licensee: '',
      valid_until: '',
      is_valid: false,
      reason:
        'no license configured: put the license JSON in the license secret (stack output LicenseSecretArn)',
      days_left: null,
    });
  });

  it('treats a secret without a value as no license configured, and asks again only after the cache age', async () => {
    // Prepare
    sm.on(GetSecretValueCommand, { SecretId: LICENSE_SECRET }).rejects(
      new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
        $metadata: {},
      }),
    );
    const source = createLicenseSource(
      lambdaConfig({ LICENSE_SECRET_ID: LICENSE_SECRET, SECRETS_MAX_AGE: '60' }),
    );

    // Act
    const first = await source.getLicense();
    await source.getLicense();
    vi.setSystemTime(new Date('2026-01-15T10:01:01Z'));
    await source.getLicense();

    // Assess
    expect(first.reason).toBe(
      'no license configured: put the license JSON in the license secret (stack output LicenseSecretArn)',
    );
    expect(secretCalls(LICENSE_SECRET)).toBe(2);
  });

  it('reports a malformed license with its reason', async () => {
    // Prepare
    givenSecret(LICENSE_SECRET, '{"licensee":"ACME","valid_until":"soon"}');
    const source = createLicenseSource(lambdaConfig({ LICENSE_SECRET_ID: LICENSE_SECRET }));

    // Act
    const status = await source.getLicense();

    // Assess
    expect(status).toMatchObject({
      is_valid: false,
      reason: 'valid_until must be a date YYYY-MM-DD',
      days_left: null,
    });
  });

  it('throws an Error naming the secret when Secrets Manager cannot be read', async () => {
    // Prepare
    sm.on(GetSecretValueCommand, { SecretId: LICENSE_SECRET }).rejects(new Error('socket hang up'));
    const source = createLicenseSource(lambdaConfig({ LICENSE_SECRET_ID: LICENSE_SECRET }));

    // Act / Assess
    await expect(source.getLicense()).rejects.toThrow(
      `license secret ${LICENSE_SECRET} could not be read: socket hang up`,
    );
  });
});

describe('createLicenseSource: without a secret', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-license-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads LICENSE_FILE, and re-reads it when it changes', async () => {
    // Prepare
    const pair = generateKeyPair();
    const file = join(dir, 'license.json');
    writeFileSync(file, JSON.stringify(signLicense('ACME', '2026-01-14', pair.privateKeyPem)));
    const source = createLicenseSource(
      loadConfig({ LICENSE_FILE: file, LICENSE_PUBLIC_KEY: pair.publicKeyBase64 }),
    );
    const expired = await source.getLicense();

    // Act
    writeFileSync(file, JSON.stringify(signLicense('ACME Renewed', '2027-01-14', pair.privateKeyPem)));
    utimesSync(file, new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'));
    const renewed = await source.getLicense();

    // Assess
    expect(expired).toMatchObject({
      is_valid: false,
      reason: 'license expired on 2026-01-14',
      days_left: -1,
    });
    expect(renewed).toEqual({
      licensee: 'ACME Renewed',
      valid_until: '2027-01-14',
      is_valid: true,
      days_left: 364,
    });
    expect(sm.calls()).toHaveLength(0);
  });

  it('answers invalid when LICENSE_FILE cannot be read', async () => {
    // Prepare
    const file = join(dir, 'missing.json');
    const source = createLicenseSource(loadConfig({ LICENSE_FILE: file }));

    // Act
    const status = await source.getLicense();

    // Assess
    expect(status).toMatchObject({
      is_valid: false,
      reason: 'the license file (LICENSE_FILE) could not be read (ENOENT)',
    });
    // The reason reaches every refused caller: it never shows where the server keeps its files.
    expect(JSON.stringify(status)).not.toContain(dir);
  });

  it('gives a local run a development license valid for a year', async () => {
    // Act
    const status = await createLicenseSource(loadConfig({})).getLicense();

    // Assess
    expect(status).toEqual({
      licensee: DEVELOPMENT_LICENSEE,
      valid_until: '2027-01-15',
      is_valid: true,
      days_left: 365,
    });
    expect(status.licensee).toContain('not for production');
  });

  it('gives a Lambda run no license', async () => {
    // Act
    const status = await createLicenseSource(lambdaConfig()).getLicense();

    // Assess
    expect(status).toEqual({
      licensee: '',
      valid_until: '',
      is_valid: false,
      reason: 'no license configured',
      days_left: null,
    });
  });
});
