/**
 * The bounded look for the envelope `id` of a call refused before its body is parsed
 * (lambdas/middleware/envelope-id.ts): it agrees with `JSON.parse` on every object that fits in
 * the look, and reads nothing past its limit, whatever follows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodyPrefix,
  ENVELOPE_ID_PEEK_CHARS,
  peekEnvelopeId,
} from '../../../lambdas/middleware/envelope-id.ts';

/** What the whole parse says the `id` is: a string member, else `null`. */
function parsedId(text: string): string | null {
  try {
    const value: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    const id = (value as Record<string, unknown>).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

describe('peekEnvelopeId', () => {
  it.each([
    ['{"id":"01J9Z3","action":"search"}', '01J9Z3'],
    ['\uFEFF { "jsonrpc" : "2.0" ,\n "id" : "a\\"b\\u00e9" }', 'a"bé'],
    ['{"params":[[["name","=","id"]],{"id":"inner"}],"id":"outer"}', 'outer'],
    ['{"\\u0069d":"escaped-key"}', 'escaped-key'],
    ['{"id":"first","id":"last"}', 'last'],
    ['{"id":"first","id":7}', null],
    ['{"id":7}', null],
    ['{"id":null}', null],
    ['["id","x"]', null],
    ['"id"', null],
    ['', null],
    ['{"id":"cut', null],
    ['{"a":{"id":"nested"}}', null],
    ['{"a":"}","id":"after-brace-in-string"}', 'after-brace-in-string'],
  ])('%j -> %j', (text, expected) => {
    expect(peekEnvelopeId(text)).toBe(expected);
  });

  it('finds the id in front of a huge unparseable body, reading only its first characters', () => {
    // Prepare: the attack body of the README (6 MB of nested brackets) behind a normal start.
    const head = '{"id":"attack-1","action":"search","params":';
    const body = `${head}${'['.repeat(6 * 1024 * 1024)}`;
    // Act + Assess
    expect(peekEnvelopeId(body)).toBe('attack-1');
  });

  it('gives null for an id past the limit', () => {
    const body = `{"pad":"${'x'.repeat(ENVELOPE_ID_PEEK_CHARS)}","id":"late"}`;
    expect(peekEnvelopeId(body)).toBeNull();
  });

  it('agrees with JSON.parse on every object that fits in the look', () => {
    const objects = fc
      .dictionary(
        fc.oneof(fc.constantFrom('id', 'jsonrpc', 'params', 'action'), fc.string({ maxLength: 6 })),
        fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 3 })),
        { maxKeys: 6 },
      )
      .map((record) => JSON.stringify(record, null, record.id === undefined ? 0 : 1))
      .filter((text) => text.length <= ENVELOPE_ID_PEEK_CHARS);
    fc.assert(
      fc.property(objects, (text) => {
        expect(peekEnvelopeId(text)).toBe(parsedId(text));
      }),
      { numRuns: 500 },
    );
  });

  it('never throws and never reads past the limit, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (head, tail) => {
        const limit = 100;
        const peeked = peekEnvelopeId(`${head}${tail}`, limit);
        expect(peeked).toBe(peekEnvelopeId(`${head}${tail}`.slice(0, limit), limit));
      }),
      { numRuns: 500 },
    );
  });
});

describe('bodyPrefix', () => {
  it('decodes only the start of a base64 body, enough for the look', () => {
    const text = `{"id":"é-${'y'.repeat(10_000)}"}`;
    const prefix = bodyPrefix({ body: Buffer.from(text).toString('base64'), isBase64Encoded: true }, 100);
    expect(text.startsWith(prefix.slice(0, 100))).toBe(true);
    expect(prefix.length).toBeGreaterThanOrEqual(100);
    expect(prefix.length).toBeLessThan(1_000);
  });

  it('reads as many characters of a base64 body as of a plain one, multibyte ones included', () => {
    // Prepare: the id comes after 3000 two-byte and 300 four-byte characters (over 6 KB of UTF-8).
    const text = `{"pad":"${'é'.repeat(3000)}${'😀'.repeat(300)}","id":"after-multibyte","more":"${'z'.repeat(9000)}"}`;
    const base64 = Buffer.from(text).toString('base64');
    // Act
    const plain = bodyPrefix({ body: text }, ENVELOPE_ID_PEEK_CHARS);
    const decoded = bodyPrefix({ body: base64, isBase64Encoded: true }, ENVELOPE_ID_PEEK_CHARS);
    // Assess
    expect(decoded).toBe(plain);
    expect(peekEnvelopeId(decoded)).toBe('after-multibyte');
  });

  it('gives the text as it is when not encoded, cut to the limit', () => {
    expect(bodyPrefix({ body: 'abcdef' }, 3)).toBe('abc');
    expect(bodyPrefix({}, 3)).toBe('');
  });
});
