/**
 * @module middleware/envelope-id
 * The envelope `id` of a call that may be refused before its body is parsed (no key, a wrong key,
 * no license). Authentication comes before any unbounded work, so the body is not parsed for
 * such a call: a bounded look at its first {@link ENVELOPE_ID_PEEK_CHARS} characters finds a
 * top-level string member `id` when there is one, and the answer echoes it. Everything else
 * leaves the `id` `null`. Once the caller is authenticated, `jsonBody` parses the whole body and
 * sets the `id` from it (see the README, "Responses and errors", and docs/design.md).
 */
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

/**
 * How much of the body the look reads. The `id` comes first in every example of the README and
 * in every client we know of; 4 KiB leaves room for a long `id` after a few other members, and
 * reading it costs microseconds whatever the body's size.
 */
export const ENVELOPE_ID_PEEK_CHARS = 4096;

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * The value of the top-level string member `id` within the first `limit` characters of a JSON
 * object text, or `null` when none is found there (not an object, `id` not a string, `id` past
 * the limit, broken JSON before it). A repeated `id` gives the last one seen, as `JSON.parse`
 * does. Linear in `limit`, never in the body's size, and never throws.
 *
 * @example
 * peekEnvelopeId('{"jsonrpc":"2.0","id":"01J9Z3","params":[[' + '['.repeat(1e6)) // '01J9Z3'
 */
export function peekEnvelopeId(body: string, limit = ENVELOPE_ID_PEEK_CHARS): string | null {
  const text = body.length > limit ? body.slice(0, limit) : body;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const skipSpace = (): void => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i += 1;
  };
  /** The end (exclusive) of the string token starting at `i`, or -1 when it is cut off. */
  const stringEnd = (start: number): number => {
    for (let j = start + 1; j < text.length; j += 1) {
      const c = text[j];
      if (c === '\\') j += 1;
      else if (c === '"') return j + 1;
    }
    return -1;
  };
  /** Skips one value of any kind; false when it is cut off or broken. */
  const skipValue = (): boolean => {
    let depth = 0;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '"') {
        const end = stringEnd(i);
        if (end < 0) return false;
        i = end;
      } else if (c === '[' || c === '{') {
        depth += 1;
        i += 1;
      } else if (c === ']' || c === '}') {
        if (depth === 0) return true;
        depth -= 1;
        i += 1;
      } else if (c === ',' && depth === 0) {
        return true;
      } else {
        i += 1;
      }
      if (depth === 0 && (c === '"' || c === ']' || c === '}')) return true;
    }
    return false;
  };

  skipSpace();
  if (text[i] !== '{') return null;
  i += 1;
  let found: string | null = null;
  for (;;) {
    skipSpace();
    if (text[i] !== '"') return found;
    const keyEnd = stringEnd(i);
    if (keyEnd < 0) return found;
    const key = decodeString(text.slice(i, keyEnd));
    i = keyEnd;
    skipSpace();
    if (text[i] !== ':') return found;
    i += 1;
    skipSpace();
    if (key === 'id' && text[i] === '"') {
      const valueEnd = stringEnd(i);
      if (valueEnd < 0) return found;
      const value = decodeString(text.slice(i, valueEnd));
      if (value === undefined) return found;
      found = value;
      i = valueEnd;
    } else {
      if (key === 'id') found = null;
      if (!skipValue()) return found;
    }
    skipSpace();
    if (text[i] !== ',') return found;
    i += 1;
  }
}

/** A JSON string token's value, or `undefined` when the token is not valid JSON. */
function decodeString(token: string): string | undefined {
  try {
    const value: unknown = JSON.parse(token);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The body's first `chars` characters as text, decoding no more base64 than they can take. */
export function bodyPrefix(
  event: { body?: string | null; isBase64Encoded?: boolean },
  chars: number,
): string {
  const { body } = event;
  if (typeof body !== 'string') return '';
  if (!event.isBase64Encoded) return body.length > chars ? body.slice(0, chars) : body;
  // Up to 4 UTF-8 bytes per character, and 4 base64 characters per 3 bytes.
  const base64Chars = Math.ceil((chars * 4) / 3) * 4;
  const text = Buffer.from(body.slice(0, base64Chars), 'base64').toString('utf8');
  return text.length > chars ? text.slice(0, chars) : text;
}

/**
 * Middy middleware: sets the envelope `id` from the bounded look above. Register it before
 * `apiKeyAuth`, so a refused call still echoes its `id`.
 */
export function envelopeIdPeek(): ProxyMiddleware {
  const envelopeIdPeekBefore = (request: ProxyRequest): void => {
    request.context.proxy.envelopeId = peekEnvelopeId(bodyPrefix(request.event, ENVELOPE_ID_PEEK_CHARS));
  };
  return { before: envelopeIdPeekBefore };
}
