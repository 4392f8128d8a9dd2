/**
 * The byte-level JSON scanner agrees with `JSON.parse` (the oracle) on validity, and the member
 * spans it reports decode to the same values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exceedsDepth, scanJson } from '../../lambdas/platform/json.ts';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON text with one random edit: a character inserted, removed or replaced. */
const mutatedJson = fc
  .tuple(
    fc.json({ maxDepth: 4 }),
    fc.nat(),
    fc.constantFrom('insert', 'remove', 'replace'),
    fc.string({ minLength: 1, maxLength: 1 }),
  )
  .map(([text, at, edit, char]) => {
    const i = at % (text.length + 1);
    if (edit === 'insert') return text.slice(0, i) + char + text.slice(i);
    if (edit === 'remove') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + char + text.slice(i + 1);
  });

describe('scanJson', () => {
  it('accepts exactly what JSON.parse accepts (valid and mutated input, odd whitespace)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.json({ maxDepth: 4 }),
          mutatedJson,
          fc.string(),
          fc.jsonValue().map((v) => ` \n${JSON.stringify(v, null, 2)}\t`),
        ),
        (text) => {
          const scan = scanJson(Buffer.from(text, 'utf8'), { maxDepth: 1_000 });
          expect(scan.ok).toBe(parses(text));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('reports top-level member spans that decode to the parsed members', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (object) => {
        const bytes = Buffer.from(JSON.stringify(object, null, 1), 'utf8');
        const scan = scanJson(bytes, { topLevelMembers: true });
        expect(scan.ok).toBe(true);
        if (!scan.ok) return;
        for (const [key, span] of scan.members ?? []) {
          expect(JSON.parse(bytes.toString('utf8', span.start, span.end))).toEqual(
            JSON.parse(JSON.stringify(object[key])),
          );
        }
        expect([...(scan.members?.keys() ?? [])].sort()).toEqual(Object.keys(object).sort());
      }),
      { numRuns: 1_000 },
    );
  });

  it('bounds nesting like exceedsDepth does for parsed values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 8 }), (value, maxDepth) => {
        const scan = scanJson(Buffer.from(JSON.stringify(value)), { maxDepth });
        expect(scan.ok ? 'ok' : scan.reason).toBe(exceedsDepth(value, maxDepth) ? 'depth' : 'ok');
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses what JSON forbids inside strings (raw control characters, bad escapes)', () => {
    for (const text of [
      '"a\tb"',
      '"a\nb"',
      '"\\x41"',
      '"\\u12G4"',
      '"unterminated',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '-',
      '+1',
      '.5',
      'tru',
      'nul',
    ]) {
      expect(scanJson(Buffer.from(text)).ok, text).toBe(false);
    }
  });
});
