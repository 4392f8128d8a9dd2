/**
 * The `Idempotency-Key` header's value, fuzzed (`core/idempotency-key.ts`): a key as sent and as a
 * structured-field string are one key; whatever two values a repeated header joins, the result is
 * refused; and whatever the value, a key read from it is 1 to 255 visible ASCII characters
 * without a comma; the typed client's header for a key is read back as that key, and the OpenAPI
 * document's pattern matches exactly the values a key is read from.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyHeader } from '../../client/src/proxy.ts';
import { IDEMPOTENCY_KEY_PATTERN, parseIdempotencyKey } from '../../lambdas/core/idempotency-key.ts';
import { deref, type Json, openApiDocument } from '../support/openapi-doc.ts';

/** A visible ASCII character other than the comma. */
const keyChar = fc
  .integer({ min: 0x21, max: 0x7e })
  .filter((code) => code !== 0x2c)
  .map((code) => String.fromCharCode(code));
const key = fc.string({ unit: keyChar, minLength: 1, maxLength: 255 });
/** `key` as an RFC 9651 string: quoted, `"` and `\` escaped. */
const quoted = (text: string): string => `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
/** A value a client may send for `key`: as sent (unless it starts with a quote), or quoted. */
const headerValue = key.chain((text) =>
  text.startsWith('"') ? fc.constant(quoted(text)) : fc.constantFrom(text, quoted(text)),
);

describe('Idempotency-Key values', () => {
  it('reads a key as sent and as a quoted string as one key', () => {
    fc.assert(
      fc.property(key, (text) => {
        expect(parseIdempotencyKey(quoted(text))).toEqual({ key: text });
        if (!text.startsWith('"')) expect(parseIdempotencyKey(text)).toEqual({ key: text });
      }),
    );
  });

  it('refuses any two values joined as a repeated header is (a comma, with or without a space)', () => {
    fc.assert(
      fc.property(headerValue, headerValue, fc.constantFrom(',', ', '), (first, second, join) => {
        expect(parseIdempotencyKey(`${first}${join}${second}`)).toHaveProperty('problem');
      }),
    );
  });

  it('reads from any value either nothing or a key of 1 to 255 visible ASCII characters without a comma', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          headerValue.map((value) => `${value}x`),
        ),
        (value) => {
          const parsed = parseIdempotencyKey(value);
          if ('key' in parsed) {
            expect(parsed.key).toMatch(IDEMPOTENCY_KEY_PATTERN);
            expect(parsed.key).not.toContain(',');
          } else expect(parsed.problem.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('agrees with the typed client: the header it sends for a key is read back as that key', () => {
    fc.assert(
      fc.property(key, (text) => {
        expect(parseIdempotencyKey(idempotencyKeyHeader(text))).toEqual({ key: text });
      }),
    );
  });

  it('agrees with the OpenAPI document: its pattern matches exactly the values the proxy reads a key from', () => {
    const parameters = (openApiDocument.components as Json).parameters as Json;
    const schema = (deref<Json>(parameters.IdempotencyKey).schema ?? {}) as {
      pattern: string;
      maxLength: number;
    };
    const pattern = new RegExp(schema.pattern);
    const ascii = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      maxLength: 20,
    });
    const value = fc.oneof(
      headerValue,
      ascii,
      ascii.map((text) => `"${text}"`),
      fc.tuple(headerValue, headerValue).map(([a, b]) => `${a},${b}`),
    );
    fc.assert(
      fc.property(value, (text) => {
        const readable = 'key' in parseIdempotencyKey(text);
        expect(pattern.test(text) && text.length <= schema.maxLength, text).toBe(readable);
      }),
    );
  });
});
