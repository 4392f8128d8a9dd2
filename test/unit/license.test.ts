import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  addUtcYears,
  canonicalLicenseMessage,
  evaluateLicense,
  generateKeyPair,
  isIsoDate,
  parsePublicKey,
  signLicense,
} from '../../lambdas/platform/license.ts';

const NOW = new Date('2026-01-15T10:00:00Z');
const pair = generateKeyPair();
const otherPair = generateKeyPair();

describe('evaluateLicense: well-formedness', () => {
  it.each([
    ['text that is not JSON', '{"licensee": "ACME", ', 'license is not valid JSON'],
    ['an empty string', '', 'license is not valid JSON'],
    ['a JSON array', '[]', 'license must be a JSON object'],
    ['JSON null', 'null', 'license must be a JSON object'],
    ['no licensee', '{"valid_until":"2026-12-31"}', 'license is missing licensee'],
    ['an empty licensee', '{"licensee":"  ","valid_until":"2026-12-31"}', 'license is missing licensee'],
    ['a numeric licensee', '{"licensee":42,"valid_until":"2026-12-31"}', 'licensee must be a string'],
    [
      'a licensee with a newline',
      '{"licensee":"A\\nB","valid_until":"2026-12-31"}',
      'licensee must not contain control characters',
    ],
    ['no valid_until', '{"licensee":"ACME"}', 'license is missing valid_until'],
    [
      'a valid_until in another format',
      '{"licensee":"ACME","valid_until":"31.12.2026"}',
      'valid_until must be a date YYYY-MM-DD',
    ],
    [
      'an impossible date',
      '{"licensee":"ACME","valid_until":"2026-02-30"}',
      'valid_until must be a date YYYY-MM-DD',
    ],
    [
      'a date with a time',
      '{"licensee":"ACME","valid_until":"2026-12-31T00:00:00Z"}',
      'valid_until must be a date YYYY-MM-DD',
    ],
    [
      'a numeric signature',
      '{"licensee":"ACME","valid_until":"2026-12-31","signature":1}',
      'signature must be a base64 string',
    ],
  ])('Given %s, it is invalid with a reason and days_left null', (_case, raw, reason) => {
    // Act
    const status = evaluateLicense(raw, { now: NOW });

    // Assess
    expect(status).toEqual({ licensee: '', valid_until: '', is_valid: false, reason, days_left: null });
  });

  it('accepts an already parsed object and bytes, and ignores unknown fields', () => {
    // Prepare
    const doc = { licensee: 'ACME', valid_until: '2026-12-31', issued_by: 'sales' };

    // Act
    const fromObject = evaluateLicense(doc, { now: NOW });
    const fromBytes = evaluateLicense(new TextEncoder().encode(JSON.stringify(doc)), { now: NOW });

    // Assess
    expect(fromObject).toEqual({
      licensee: 'ACME',
      valid_until: '2026-12-31',
      is_valid: true,
      days_left: 350,
    });
    expect(fromBytes).toEqual(fromObject);
  });
});

describe('evaluateLicense: dates (UTC)', () => {
  const license = '{"licensee":"ACME","valid_until":"2026-01-31"}';

  it('is valid on the last day, up to its last millisecond UTC, with days_left 0', () => {
    // Act
    const morning = evaluateLicense(license, { now: new Date('2026-01-31T00:00:00.000Z') });
    const night = evaluateLicense(license, { now: new Date('2026-01-31T23:59:59.999Z') });

    // Assess
    expect(morning).toMatchObject({ is_valid: true, days_left: 0 });
    expect(night).toMatchObject({ is_valid: true, days_left: 0 });
    expect(night.reason).toBeUndefined();
  });

  it('is expired from the first millisecond of the next UTC day, whatever the local time zone says', () => {
    // Act: 2026-02-01T00:00Z is still January 31 in America (UTC-5), but the rule is UTC.
    const status = evaluateLicense(license, { now: new Date('2026-01-31T19:00:00-05:00') });

    // Assess
    expect(status).toEqual({
      licensee: 'ACME',
      valid_until: '2026-01-31',
      is_valid: false,
      reason: 'license expired on 2026-01-31',
      days_left: -1,
    });
  });

  it('counts whole days to valid_until, and negative days after it', () => {
    // Act
    const before = evaluateLicense(license, { now: new Date('2026-01-01T23:00:00Z') });
    const after = evaluateLicense(license, { now: new Date('2026-03-02T01:00:00Z') });

    // Assess
    expect(before.days_left).toBe(30);
    expect(after).toMatchObject({ is_valid: false, days_left: -30, reason: 'license expired on 2026-01-31' });
  });

  it('uses the clock when now is left out', () => {
    // Act
    const status = evaluateLicense('{"licensee":"ACME","valid_until":"9999-12-31"}');

    // Assess
    expect(status.is_valid).toBe(true);
  });

  it.each([
    ['2024-02-29', true],
    ['2025-02-29', false],
    ['2026-13-01', false],
    ['2026-1-01', false],
    ['2026-12-31', true],
  ])('isIsoDate(%s) is %s', (text, expected) => {
    expect(isIsoDate(text)).toBe(expected);
  });

  it('adds whole UTC years, rolling Feb 29 over to Mar 1', () => {
    expect(addUtcYears(new Date('2026-06-30T23:30:00Z'), 1)).toBe('2027-06-30');
    expect(addUtcYears(new Date('2028-02-29T12:00:00Z'), 1)).toBe('2029-03-01');
  });
});

describe('evaluateLicense: signature', () => {
  it('verifies the documented example license: the signed text (licensee, newline, date) is fixed', () => {
    // The key and license of docs/operators-license.md: licenses already issued must keep
    // verifying, whatever changes in how the proxy builds the signed text.
    const documented = {
      licensee: 'ACME GmbH',
      valid_until: '2027-03-31',
      signature: 'HLyrmEr/G3aP6L+NXhJh26K/SfOzMpLp73gkWN+97M7iowJXW4ra19BuretG1QssPA9tHVek0kXbQd77Q+eiDg==',
    };
    const publicKey = 'MCowBQYDK2VwAyEATu7nxub9qN7/AOG7oV2iaQo///dE077j4MUrD/iEVOU=';
    expect(canonicalLicenseMessage('ACME GmbH', '2027-03-31').toString('utf8')).toBe('ACME GmbH\n2027-03-31');
    expect(evaluateLicense(JSON.stringify(documented), { publicKey, now: NOW }).is_valid).toBe(true);
    expect(
      evaluateLicense(JSON.stringify({ ...documented, licensee: 'ACME AG' }), { publicKey, now: NOW }),
    ).toMatchObject({ is_valid: false, reason: 'license signature does not verify' });
  });

  it('judges the same text again under another key (the kept result is per text and key)', () => {
    const text = JSON.stringify(signLicense('ACME GmbH', '2026-12-31', pair.privateKeyPem));
    expect(evaluateLicense(text, { publicKey: pair.publicKeyBase64, now: NOW }).is_valid).toBe(true);
    expect(evaluateLicense(text, { publicKey: otherPair.publicKeyBase64, now: NOW })).toMatchObject({
      is_valid: false,
      reason: 'license signature does not verify',
    });
    expect(evaluateLicense(text, { publicKey: pair.publicKeyBase64, now: NOW }).is_valid).toBe(true);
  });

  it('verifies a license signed with the matching key (round trip)', () => {
    // Prepare
    const license = signLicense('ACME GmbH', '2026-12-31', pair.privateKeyPem);

    // Act
    const status = evaluateLicense(JSON.stringify(license), { publicKey: pair.publicKeyBase64, now: NOW });

    // Assess
    expect(license.signature).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    expect(status).toEqual({
      licensee: 'ACME GmbH',
      valid_until: '2026-12-31',
      is_valid: true,
      days_left: 350,
    });
  });

  it.each([
    ['licensee changed', { licensee: 'ACME Ltd' }],
    ['valid_until extended', { valid_until: '2099-12-31' }],
    [
      'signature of another key',
      { signature: signLicense('ACME GmbH', '2026-12-31', otherPair.privateKeyPem).signature },
    ],
    ['signature truncated', { signature: 'AAAA' }],
    ['signature not base64', { signature: '***not base64***' }],
  ])('rejects a tampered license (%s) and keeps the signature out of the reason', (_case, change) => {
    // Prepare
    const license = { ...signLicense('ACME GmbH', '2026-12-31', pair.privateKeyPem), ...change };

    // Act
    const status = evaluateLicense(license, { publicKey: pair.publicKeyPem, now: NOW });

    // Assess
    expect(status.is_valid).toBe(false);
    expect(status.reason).toBe('license signature does not verify');
    expect(JSON.stringify(status)).not.toContain(license.signature);
  });

  it('reports a missing signature when a public key is configured', () => {
    // Act
    const status = evaluateLicense(
      { licensee: 'ACME', valid_until: '2026-12-31' },
      { publicKey: pair.publicKeyPem, now: NOW },
    );

    // Assess
    expect(status).toMatchObject({ is_valid: false, reason: 'license signature is missing', days_left: 350 });
  });

  it('does not check the signature when no public key is configured', () => {
    // Act
    const status = evaluateLicense(
      { licensee: 'ACME', valid_until: '2026-12-31', signature: 'garbage' },
      { now: NOW },
    );

    // Assess
    expect(status.is_valid).toBe(true);
  });

  it('reports a bad signature before the expiry', () => {
    // Prepare
    const license = { ...signLicense('ACME', '2025-12-31', pair.privateKeyPem), licensee: 'Mallory' };

    // Act
    const status = evaluateLicense(license, { publicKey: pair.publicKeyPem, now: NOW });

    // Assess
    expect(status.reason).toBe('license signature does not verify');
  });

  it('reports an expired license even when its signature verifies', () => {
    // Prepare
    const license = signLicense('ACME', '2025-12-31', pair.privateKeyPem);

    // Act
    const status = evaluateLicense(license, { publicKey: pair.publicKeyPem, now: NOW });

    // Assess
    expect(status).toMatchObject({
      is_valid: false,
      reason: 'license expired on 2025-12-31',
      days_left: -15,
    });
  });

  it('refuses to sign with a key that is not an Ed25519 private key, or a malformed license', () => {
    // Prepare
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });

    // Act / Assess
    expect(() => signLicense('ACME', '2026-12-31', rsa.toString())).toThrow(
      'the private key is not an Ed25519 key',
    );
    expect(() => signLicense('ACME', '2026-12-31', 'not a key')).toThrow(
      'the private key is not a PEM private key',
    );
    expect(() => signLicense('ACME', '2026-02-30', pair.privateKeyPem)).toThrow(
      'valid_until must be a date YYYY-MM-DD',
    );
    expect(() => signLicense('', '2026-12-31', pair.privateKeyPem)).toThrow('license is missing licensee');
  });
});

describe('public key formats', () => {
  const license = signLicense('ACME', '2026-12-31', pair.privateKeyPem);
  const der = Buffer.from(pair.publicKeyBase64, 'base64');
  const raw = der.subarray(der.length - 32);

  it.each([
    ['PEM SPKI', pair.publicKeyPem],
    ['PEM with literal \\n (as pasted into an env var)', pair.publicKeyPem.trim().replace(/\n/g, '\\n')],
    ['PEM on one line with spaces', pair.publicKeyPem.trim().replace(/\n/g, ' ')],
    ['base64 DER SPKI', pair.publicKeyBase64],
    ['base64 raw 32 bytes', raw.toString('base64')],
    ['base64url raw 32 bytes', raw.toString('base64url')],
  ])('accepts %s', (_format, publicKey) => {
    // Act
    const status = evaluateLicense(license, { publicKey, now: NOW });

    // Assess
    expect(parsePublicKey(publicKey)?.asymmetricKeyType).toBe('ed25519');
    expect(status.is_valid).toBe(true);
  });

  const rsaPublic = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
  it.each([
    ['an RSA public key (PEM)', rsaPublic.export({ format: 'pem', type: 'spki' }).toString()],
    ['an RSA public key (base64 DER)', rsaPublic.export({ format: 'der', type: 'spki' }).toString('base64')],
    ['a private key PEM', pair.privateKeyPem],
    ['31 bytes', Buffer.alloc(31, 1).toString('base64')],
    ['text that is not base64', 'not a key!'],
    ['an empty string', ''],
  ])('rejects %s as LICENSE_PUBLIC_KEY', (_format, publicKey) => {
    // Act
    const status = evaluateLicense(license, { publicKey, now: NOW });

    // Assess
    expect(parsePublicKey(publicKey)).toBeUndefined();
    expect(status).toMatchObject({
      is_valid: false,
      reason: 'LICENSE_PUBLIC_KEY is not a valid Ed25519 public key',
    });
  });

  it('generates PEM key pairs whose one-line form is the SPKI DER in base64', () => {
    // Act
    const generated = generateKeyPair();

    // Assess
    expect(generated.privateKeyPem).toContain('-----BEGIN PRIVATE KEY-----');
    expect(generated.publicKeyPem).toContain('-----BEGIN PUBLIC KEY-----');
    expect(generated.publicKeyBase64).toMatch(/^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/);
  });
});
