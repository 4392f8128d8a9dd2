/**
 * The license document's fields, fuzzed against the zod schema `platform/license.ts` used before
 * it checked them by hand (to spare building a schema on every cold start): whatever the document
 * holds, `parseLicense` gives the same license (licensee trimmed, other members dropped) or the
 * same reason, the first problem in field order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { isIsoDate, parseLicense } from '../../lambdas/platform/license.ts';

const VALID_UNTIL_MESSAGE = 'valid_until must be a date YYYY-MM-DD';

/** The schema as it was (platform/license.ts until the cold-start work of issue 24). */
const REFERENCE = z.object({
  licensee: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'license is missing licensee' : 'licensee must be a string',
    })
    .trim()
    .min(1, 'license is missing licensee')
    .max(200, 'licensee must be at most 200 characters')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
    .refine((value) => !/[\u0000-\u001f\u007f]/.test(value), 'licensee must not contain control characters'),
  valid_until: z
    .string({
      error: (issue) => (issue.input === undefined ? 'license is missing valid_until' : VALID_UNTIL_MESSAGE),
    })
    .refine(isIsoDate, VALID_UNTIL_MESSAGE),
  signature: z.string({ error: 'signature must be a base64 string' }).optional(),
});

function reference(value: Record<string, unknown>) {
  const parsed = REFERENCE.safeParse(value);
  if (!parsed.success) return { ok: false, reason: parsed.error.issues[0]?.message };
  const { licensee, valid_until, signature } = parsed.data;
  return {
    ok: true,
    license: signature === undefined ? { licensee, valid_until } : { licensee, valid_until, signature },
  };
}

/** Values a member may hold: near-miss strings (lengths around 200, control characters, dates) and other JSON. */
const member = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    '   ',
    ' ACME ',
    'AC\u0007ME',
    'ACME\u007f',
    '\tACME\n',
    '2026-12-31',
    '2026-02-30',
    '2026-1-1',
  ),
  fc.integer({ min: 195, max: 205 }).map((length) => 'x'.repeat(length)),
  fc.integer({ min: 195, max: 205 }).map((length) => ` ${'x'.repeat(length)}\u0001`),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10)),
  fc.constantFrom(null, true, 0, 42, [], {}, ['ACME']),
);

const document = fc.record(
  { licensee: member, valid_until: member, signature: member, extra: member },
  { requiredKeys: [] },
);

describe('license fields, by hand and by the former zod schema', () => {
  it('give the same license or the same first reason for any document', () => {
    fc.assert(
      fc.property(document, (value) => {
        expect(parseLicense(value)).toEqual(reference(value));
        expect(parseLicense(JSON.stringify(value))).toEqual(reference(JSON.parse(JSON.stringify(value))));
      }),
      { numRuns: 2000 },
    );
  });

  it('say so for a licensee over 200 characters before its control characters', () => {
    const value = { licensee: `${'x'.repeat(201)}\u0001`, valid_until: '2026-12-31' };
    expect(parseLicense(value)).toEqual({ ok: false, reason: 'licensee must be at most 200 characters' });
    expect(reference(value)).toEqual({ ok: false, reason: 'licensee must be at most 200 characters' });
  });
});
