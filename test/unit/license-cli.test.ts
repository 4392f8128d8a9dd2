import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runLicenseCli } from '../../lambdas/operator/license-cli.ts';

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...argv: string[]): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const code = await runLicenseCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

describe('license CLI', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-license-cli-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('keygen, issue and verify work end to end, and a tampered license fails verification', async () => {
    // Prepare
    const keys = join(dir, 'keys');
    const licenseFile = join(dir, 'license.json');
    const tamperedFile = join(dir, 'tampered.json');

    // Act
    const keygen = await cli('keygen', '--out-dir', keys);
    const issue = await cli(
      'issue',
      '--licensee',
      'ACME GmbH',
      '--valid-until',
      '2099-12-31',
      '--private-key',
      join(keys, 'license-private.pem'),
    );
    writeFileSync(licenseFile, issue.stdout);
    writeFileSync(tamperedFile, JSON.stringify({ ...JSON.parse(issue.stdout), licensee: 'Mallory Inc' }));
    const publicKeyLine = keygen.stdout.trim();
    const verifyWithFile = await cli(
      'verify',
      '--license',
      licenseFile,
      '--public-key',
      join(keys, 'license-public.pem'),
    );
    const verifyWithLine = await cli('verify', '--license', licenseFile, '--public-key', publicKeyLine);
    const verifyTampered = await cli('verify', '--license', tamperedFile, '--public-key', publicKeyLine);

    // Assess
    expect(keygen.code).toBe(0);
    expect(publicKeyLine).toMatch(/^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/);
    expect(statSync(join(keys, 'license-private.pem')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(keys, 'license-public.pem'), 'utf8')).toContain('BEGIN PUBLIC KEY');
    expect(keygen.stdout).not.toContain('PRIVATE');

    expect(issue.code).toBe(0);
    expect(JSON.parse(issue.stdout)).toEqual({
      licensee: 'ACME GmbH',
      valid_until: '2099-12-31',
      signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
    });

    expect(verifyWithFile.code).toBe(0);
    expect(JSON.parse(verifyWithFile.stdout)).toEqual({
      licensee: 'ACME GmbH',
      valid_until: '2099-12-31',
      is_valid: true,
      days_left: expect.any(Number),
    });
    expect(verifyWithLine.code).toBe(0);
    expect(verifyTampered.code).toBe(1);
    expect(JSON.parse(verifyTampered.stdout)).toMatchObject({
      licensee: 'Mallory Inc',
      is_valid: false,
      reason: 'license signature does not verify',
    });
  });

  it('verify reports an expired license with exit 1, judged at --now', async () => {
    // Prepare
    const licenseFile = join(dir, 'license.json');
    writeFileSync(licenseFile, '{"licensee":"ACME","valid_until":"2026-01-31"}');

    // Act
    const lastDay = await cli('verify', '--license', licenseFile, '--now', '2026-01-31');
    const dayAfter = await cli('verify', '--license', licenseFile, '--now', '2026-02-01');

    // Assess
    expect(lastDay.code).toBe(0);
    expect(lastDay.stderr).toContain('signature is not checked');
    expect(dayAfter.code).toBe(1);
    expect(JSON.parse(dayAfter.stdout)).toEqual({
      licensee: 'ACME',
      valid_until: '2026-01-31',
      is_valid: false,
      reason: 'license expired on 2026-01-31',
      days_left: -1,
    });
  });

  it('keygen refuses to overwrite existing keys without --force', async () => {
    // Prepare
    await cli('keygen', '--out-dir', dir);
    const before = readFileSync(join(dir, 'license-private.pem'), 'utf8');

    // Act
    const again = await cli('keygen', '--out-dir', dir);
    const forced = await cli('keygen', '--out-dir', dir, '--force');

    // Assess
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect(readFileSync(join(dir, 'license-private.pem'), 'utf8')).not.toBe(before);
    expect(forced.code).toBe(0);
  });

  it.each([
    ['no command', []],
    ['--help', ['--help']],
    ['a command with --help', ['issue', '--help']],
    ['an unknown command', ['renew']],
    ['an unknown option', ['keygen', '--out', 'x']],
    ['a missing required option', ['issue', '--licensee', 'ACME', '--private-key', 'k.pem']],
    ['an option without its value', ['verify', '--license']],
    ['a bad date', ['issue', '--licensee', 'ACME', '--valid-until', '31.12.2026', '--private-key', 'k.pem']],
    ['a stray positional argument', ['verify', 'license.json']],
  ])('prints the usage to stderr and exits 2 for %s', async (_case, argv) => {
    // Act
    const result = await cli(...argv);

    // Assess
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: npm run license -- <command>');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    [
      'an unreadable private key',
      ['issue', '--licensee', 'A', '--valid-until', '2099-01-01', '--private-key', '/nonexistent/k.pem'],
      'cannot read private key file /nonexistent/k.pem (ENOENT)',
    ],
    [
      'an unreadable license',
      ['verify', '--license', '/nonexistent/l.json'],
      'cannot read license file /nonexistent/l.json (ENOENT)',
    ],
    [
      'a bad public key',
      ['verify', '--license', '/nonexistent/l.json', '--public-key', 'not-a-key'],
      'neither a readable key file nor an Ed25519 public key',
    ],
  ])('fails with exit 1 and a one-line message for %s', async (_case, argv, message) => {
    // Act
    const result = await cli(...argv);

    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('issue rejects a file that is not an Ed25519 private key, without echoing it', async () => {
    // Prepare
    const keyFile = join(dir, 'public-as-private.pem');
    await cli('keygen', '--out-dir', dir);
    writeFileSync(keyFile, readFileSync(join(dir, 'license-public.pem')));

    // Act
    const result = await cli(
      'issue',
      '--licensee',
      'A',
      '--valid-until',
      '2099-01-01',
      '--private-key',
      keyFile,
    );

    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: the private key is not a PEM private key\n');
  });
});
