/**
 * The shape of a version answer (`toErpVersion`): exactly the specification's
 * `[int | string, int, int, string, int, string]` and a short `version`, checked against an
 * independent reference on fuzzed values and against every recorded answer of a real Odoo.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_VERSION_TEXT_LENGTH, toErpVersion } from '../../lambdas/upstream/erp-answer.ts';
import { CAPTURES_DIR } from '../erp-double/capture-replay.ts';

/** The rule, written out by other means than the product's code. */
function reference(versionInfo: unknown, version: unknown): boolean {
  const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 53 - 1;
  const text = (v: unknown, min = 0) =>
    typeof v === 'string' && v.length >= min && v.length <= MAX_VERSION_TEXT_LENGTH;
  if (!Array.isArray(versionInfo) || versionInfo.length !== 6) return false;
  const [a, b, c, d, e, f] = versionInfo;
  return (int(a) || text(a, 1)) && int(b) && int(c) && text(d) && int(e) && text(f) && text(version, 1);
}

describe('toErpVersion', () => {
  it('accepts every version answer recorded from the real Odoo 19', () => {
    const answers: Array<[unknown, unknown]> = [];
    for (const file of readdirSync(CAPTURES_DIR).filter((name) => name.includes('version'))) {
      const capture = JSON.parse(readFileSync(new URL(file, CAPTURES_DIR), 'utf8')) as {
        response: { body: unknown };
      };
      const body = capture.response.body as Record<string, unknown> | null;
      const result = (body?.result ?? body) as Record<string, unknown> | null;
      if (result && typeof result === 'object' && 'version_info' in result) {
        answers.push([result.version_info, result.version]);
      }
      if (result && typeof result === 'object' && 'server_version_info' in result) {
        answers.push([result.server_version_info, result.server_version]);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(5);
    for (const [versionInfo, version] of answers) {
      expect(toErpVersion(versionInfo, version)).toEqual({ version_info: versionInfo, version });
    }
  });

  it.each([
    [['saas~18', 3, 0, 'final', 0, ''], 'saas~18.3'],
    [['saas~17', 2, 0, 'final', 0, 'e'], 'saas~17.2+e'],
    [[16, 0, 0, 'final', 0, ''], '16.0-20240709'],
    [[Number.MAX_SAFE_INTEGER, 0, 0, 'x'.repeat(MAX_VERSION_TEXT_LENGTH), 0, ''], 'v'],
  ])('accepts %j with %j', (versionInfo, version) => {
    expect(toErpVersion(versionInfo, version)?.version_info).toEqual(versionInfo);
  });

  it.each([
    [Array.from({ length: 1000 }, () => 0), '19.0'],
    [[-1, 1e308, 0.5, 'final', 0, ''], '19.0'],
    [[19, 0, 0, 'final', 0], '19.0'],
    [[19, 0, 0, 'final', 0, '', 'extra'], '19.0'],
    [[2 ** 53, 0, 0, 'final', 0, ''], '19.0'],
    [[19, Number.NaN, 0, 'final', 0, ''], '19.0'],
    [['19', '0', 0, 'final', 0, ''], '19.0'],
    [[19, 0, 0, 'final', 0, ''], ''],
    [[19, 0, 0, 'final', 0, ''], 'x'.repeat(MAX_VERSION_TEXT_LENGTH + 1)],
    [{ 0: 19 }, '19.0'],
  ])('refuses %j with %j', (versionInfo, version) => {
    expect(toErpVersion(versionInfo, version)).toBeUndefined();
  });

  it('returns a copy: an array the ERP sent is never passed on itself', () => {
    const sent = [19, 0, 0, 'final', 0, ''];
    expect(toErpVersion(sent, '19.0')?.version_info).not.toBe(sent);
  });

  it('agrees with the reference on fuzzed answers', () => {
    const part = fc.oneof(
      fc.integer({ min: -3, max: 40 }),
      fc.constantFrom(0.5, -0, 1e308, 2 ** 53, Number.MAX_SAFE_INTEGER, Number.NaN),
      fc.string({ maxLength: MAX_VERSION_TEXT_LENGTH + 2 }),
      fc.constantFrom('saas~18', 'final', 'e', '', null, true, [], {}),
    );
    const versionInfo = fc.oneof(
      fc.tuple(part, part, part, part, part, part),
      fc.array(part, { maxLength: 8 }),
      fc.tuple(
        fc.oneof(fc.nat(30), fc.constantFrom('saas~18')),
        fc.nat(5),
        fc.nat(5),
        fc.constantFrom('final', 'alpha'),
        fc.nat(3),
        fc.constantFrom('', 'e'),
      ),
    );
    const version = fc.oneof(
      fc.string({ maxLength: MAX_VERSION_TEXT_LENGTH + 2 }),
      fc.constantFrom(19, null),
    );
    fc.assert(
      fc.property(versionInfo, version, (info, text) => {
        expect(toErpVersion(info, text) !== undefined).toBe(reference(info, text));
      }),
      { numRuns: 2000 },
    );
  });
});
