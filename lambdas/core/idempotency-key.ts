/**
 * @module core/idempotency-key
 * The `Idempotency-Key` header as draft-ietf-httpapi-idempotency-key-header defines it: one item,
 * the key as sent (`K`, as the proxy always read it) or a structured-field string (`"K"`, RFC 9651
 * section 3.3.3, whose key is `K`; `\"` and `\\` are its only escapes). The key is 1 to 255
 * visible ASCII characters (`!` to `~`) either way.
 *
 * A comma is refused wherever it stands: a repeated header reaches the proxy as one value joined
 * by commas (API Gateway's payload 2.0 and the local server alike), and a list is several keys, so
 * a key taken from either would be a key the client never sent (`K,K` ran the write again). An
 * empty value is refused too. Pure functions: `core/idempotency.ts` uses them, the tests drive
 * them directly.
 */
import { InvalidRequestError } from '../platform/errors.ts';

/** 1 to 255 visible ASCII characters (`!` to `~`): README, "Retrying writes safely". */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The longest key, in characters (after a quoted form's escapes are read). */
const MAX_KEY_LENGTH = 255;

/** What one item must be, said in every refusal. */
const EXPECTED =
  'expected one key of 1 to 255 visible ASCII characters (no spaces or commas), as sent or as a quoted string ("K")';

/** The key a structured-field string carries (`value` starts with `"`), or why it is not one. */
function quotedKey(value: string): { readonly key: string } | { readonly problem: string } {
  let key = '';
  for (let i = 1; i < value.length; i += 1) {
    const char = value[i] as string;
    if (char === '"') {
      if (i !== value.length - 1) return { problem: 'something follows the closing quote' };
      if (key === '') return { problem: 'an empty quoted string' };
      return key.length > MAX_KEY_LENGTH ? { problem: `a key of ${key.length} characters` } : { key };
    }
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') return { problem: 'a backslash that escapes neither " nor \\' };
      key += next;
      i += 1;
      continue;
    }
    const code = char.charCodeAt(0);
    if (code < 0x21 || code > 0x7e) return { problem: 'a character that is not visible ASCII' };
    key += char;
  }
  return { problem: 'a quoted string without its closing quote' };
}

/**
 * Reads the header's value (as the platform hands it over: repeated headers joined by commas):
 * the key, or why the value is not one key.
 *
 * @example
 * parseIdempotencyKey('order-42') // { key: 'order-42' }
 * parseIdempotencyKey('"order-42"') // { key: 'order-42' }
 * parseIdempotencyKey('order-42,order-42') // { problem: 'a list of keys ...' }
 */
export function parseIdempotencyKey(value: string): { readonly key: string } | { readonly problem: string } {
  if (value === '') return { problem: 'an empty value' };
  if (value.includes(','))
    return { problem: 'a list of keys (a comma: the header sent twice, or several values in it)' };
  if (value.startsWith('"')) return quotedKey(value);
  if (IDEMPOTENCY_KEY_PATTERN.test(value)) return { key: value };
  return {
    problem:
      value.length > MAX_KEY_LENGTH
        ? `${value.length} characters`
        : 'a space or a character that is not visible ASCII',
  };
}

/**
 * The `Idempotency-Key` header's value, checked: its key; `undefined` when absent; -32600 (HTTP
 * 400) naming the header when the value is not one key ({@link parseIdempotencyKey}). The message
 * never echoes the value.
 */
export function checkIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const parsed = parseIdempotencyKey(value);
  if ('problem' in parsed)
    throw new InvalidRequestError(`Invalid Idempotency-Key header: got ${parsed.problem}; ${EXPECTED}`);
  return parsed.key;
}
