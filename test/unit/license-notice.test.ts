/**
 * The license warning before any call is refused (README, Quick start; docs/operators-license.md):
 * what it says for each license state, and that a deployed function logs it once per execution
 * environment, the first time it reads its license, without the signature or any key. The local
 * server's warning at start is checked on the real `npm start` (readme-examples.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { generateKeyPair, signLicense } from '../../lambdas/platform/license.ts';
import { licenseWarning, warnOnceAboutLicense } from '../../lambdas/platform/license-notice.ts';
import type { LicenseStatus } from '../../lambdas/platform/secrets.ts';
import { captureOutputLines } from '../support/captured-output.ts';
import { withProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const status = (fields: Partial<LicenseStatus>): LicenseStatus => ({
  licensee: 'ACME',
  valid_until: '2026-12-01',
  is_valid: true,
  days_left: 100,
  ...fields,
});

describe('licenseWarning', () => {
  it.each([
    [
      status({ is_valid: false, reason: 'license expired on 2026-01-31', days_left: -2 }),
      /not valid \(license expired on 2026-01-31\)/,
    ],
    [
      status({ is_valid: false, reason: 'license signature does not verify' }),
      /not valid \(license signature does not verify\)/,
    ],
    [status({ days_left: 13 }), /ACME expires on 2026-12-01 \(in 13 days\)/],
    [status({ days_left: 1 }), /\(in 1 day\)/],
    [status({ days_left: 0 }), /\(today is its last day\)/],
  ])('warns: %j', (license, expected) => {
    expect(licenseWarning(license, 14)).toMatch(expected);
  });

  it('says nothing from the warning days on (the alarm counts alike: fewer days left than the setting)', () => {
    expect(licenseWarning(status({ days_left: 14 }), 14)).toBeUndefined();
    expect(licenseWarning(status({ days_left: 100 }), 14)).toBeUndefined();
    expect(licenseWarning(status({ days_left: 100 }), 101)).toMatch(/in 100 days/);
  });
});

describe('warnOnceAboutLicense', () => {
  it('warns with the first license read only; a read that fails does not use the warning up', async () => {
    // Prepare
    const warnings: string[] = [];
    let fail = true;
    const source = warnOnceAboutLicense(
      {
        getLicense: async () => {
          if (fail) throw new Error('secret unreachable');
          return status({ days_left: 3 });
        },
      },
      14,
      (message) => warnings.push(message),
    );

    // Act
    await expect(source.getLicense()).rejects.toThrow('secret unreachable');
    fail = false;
    await source.getLicense();
    await source.getLicense();

    // Assess
    expect(warnings).toEqual([expect.stringMatching(/^license: the license of ACME expires/)]);
  });
});

describe('a deployed function logs the warning once per execution environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-license-notice-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => vi.restoreAllMocks());

  /** A signed license valid for `days` more days, in a file, and the public key that verifies it. */
  function signedLicense(days: number): { file: string; publicKey: string; signature: string } {
    const keys = generateKeyPair();
    const date = new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const license = signLicense('ACME', date, keys.privateKeyPem);
    const file = join(dir, `license-${days}.json`);
    writeFileSync(file, JSON.stringify(license));
    return { file, publicKey: keys.publicKeyBase64, signature: license.signature };
  }

  it('on its first call that reads the license, not on the next ones; no signature, no key', async () => {
    // Prepare
    const license = signedLicense(5);
    const lines = captureOutputLines();
    const env = {
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-execute-v1',
      LICENSE_FILE: license.file,
      LICENSE_PUBLIC_KEY: license.publicKey,
    };

    // Act: three calls (refused after the license check: the body is not a request).
    await withProxy({ env }, async (proxy) => {
      for (let i = 0; i < 3; i += 1) {
        expect((await proxy.post('/api/erp/execute', '{}')).status).toBe(400);
      }
    });

    // Assess
    const warnings = lines().filter((line) => line.includes('"message":"license: '));
    expect(warnings).toHaveLength(1);
    const logged = JSON.parse(warnings[0] ?? '{}') as { level: string; message: string; license: unknown };
    expect(logged.level).toBe('WARN');
    expect(logged.message).toMatch(
      /^license: the license of ACME expires on \d{4}-\d\d-\d\d \(in [45] days\)/,
    );
    expect(logged.license).toMatchObject({ licensee: 'ACME', is_valid: true });
    for (const secret of [license.signature, license.publicKey, TEST_PROXY_KEY]) {
      expect(warnings[0]).not.toContain(secret);
    }
  });

  it('nothing for a license far from its end, nor from the local server (it warns at start)', async () => {
    const lines = captureOutputLines();
    const far = signedLicense(100);
    await withProxy(
      {
        env: {
          AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-version',
          LICENSE_FILE: far.file,
          LICENSE_PUBLIC_KEY: far.publicKey,
        },
      },
      async (proxy) => {
        await proxy.post('/api/erp/version', '{}');
      },
    );
    const near = signedLicense(5);
    await withProxy(
      { env: { LICENSE_FILE: near.file, LICENSE_PUBLIC_KEY: near.publicKey } },
      async (proxy) => {
        await proxy.post('/api/erp/version', '{}');
      },
    );
    expect(lines().filter((line) => line.includes('"message":"license: '))).toEqual([]);
  });
});
