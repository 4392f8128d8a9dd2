/**
 * The `Idempotency-Key` header's value (`core/idempotency-key.ts`; draft-ietf-httpapi-idempotency-key-header):
 * one key, as sent or as a structured-field string; a list, a repeated header (comma-joined), an
 * empty value and a malformed string are -32600 naming the header, never echoing the value.
 */
import { describe, expect, it } from 'vitest';
import { checkIdempotencyKey, parseIdempotencyKey } from '../../lambdas/core/idempotency-key.ts';
import { InvalidRequestError } from '../../lambdas/platform/errors.ts';

describe('parseIdempotencyKey', () => {
  it.each([
    ['order-42', 'order-42'],
    ['"order-42"', 'order-42'],
    ['01J9Z8K3T5W7X9Y1Z3A5B7C9D1', '01J9Z8K3T5W7X9Y1Z3A5B7C9D1'],
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['a"b', 'a"b'], // a quote inside a key as sent is a character of it, as before
    ['a\\b', 'a\\b'],
    ['k'.repeat(255), 'k'.repeat(255)],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
    [`"${'\\"'.repeat(255)}"`, '"'.repeat(255)], // 255 characters once the escapes are read
  ])('reads %j as the key %j', (value, key) => expect(parseIdempotencyKey(value)).toEqual({ key }));

  it.each([
    ['an empty value', '', 'an empty value'],
    ['a repeated header, as API Gateway and the local server join it', 'order-42,order-42', 'a list of keys'],
    ['a repeated header joined with a space', 'order-42, order-42', 'a list of keys'],
    ['a list of strings', '"a", "b"', 'a list of keys'],
    ['a comma inside a string (the two halves of a repeated header)', '"a,b"', 'a list of keys'],
    ['a bare key with a comma', 'a,b', 'a list of keys'],
    ['an empty string', '""', 'an empty quoted string'],
    ['a string without its closing quote', '"order-42', 'without its closing quote'],
    ['a parameter', '"order-42";x=1', 'something follows the closing quote'],
    ['an escape sf-string does not have', '"a\\nb"', 'a backslash that escapes neither'],
    ['a backslash at the end', '"a\\', 'a backslash that escapes neither'],
    ['a space inside the string', '"two words"', 'not visible ASCII'],
    ['a space', 'two words', 'a space'],
    ['not ASCII', 'clé', 'not visible ASCII'],
    ['256 characters', 'k'.repeat(256), '256 characters'],
    ['256 characters inside the quotes', `"${'k'.repeat(256)}"`, 'a key of 256 characters'],
  ])('refuses %s', (_what, value, problem) => {
    const parsed = parseIdempotencyKey(value);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});

describe('checkIdempotencyKey', () => {
  it('gives the key, or undefined when the header is absent', () => {
    expect(checkIdempotencyKey(undefined)).toBeUndefined();
    expect(checkIdempotencyKey('"K"')).toBe('K');
    expect(checkIdempotencyKey('K')).toBe('K');
  });

  it('refuses -32600 (HTTP 400) naming the header, without echoing the value', () => {
    let error: unknown;
    try {
      checkIdempotencyKey('secret-ish-key,secret-ish-key');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    const refusal = error as InvalidRequestError;
    expect(refusal.code).toBe(-32600);
    expect(refusal.httpStatus).toBe(400);
    expect(refusal.message).toBe(
      'Invalid Idempotency-Key header: got a list of keys (a comma: the header sent twice, or several values in it); expected one key of 1 to 255 visible ASCII characters (no spaces or commas), as sent or as a quoted string ("K")',
    );
    expect(refusal.message).not.toContain('secret-ish-key');
  });
});
