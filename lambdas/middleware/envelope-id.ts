/**
 * @module middleware/envelope-id
 * The envelope `id` of a call that may be refused before its body is parsed (no key, a wrong key,
 * no license). Authentication comes before any unbounded work, so the body is not parsed for
 * such a call: a bounded look at its first {@link ENVELOPE_ID_PEEK_CHARS} characters finds a
 * top-level string member `id` when there is one, and the answer echoes it. Everything else
 * leaves the `id` `null`. Once the caller is authenticated, `jsonBody` parses the whole body and
 * sets the `id` from it (see the README, "Responses and errors", and docs/design.md).
 */
import { leadingStringMember } from '../platform/json.ts';
import { type NoValues, type Step, step } from './step.ts';

/**
 * How much of the body the look reads. The `id` comes first in every example of the README and
 * in every client we know of; 4 KiB leaves room for a long `id` after a few other members, and
 * reading it costs microseconds whatever the body's size.
 */
export const ENVELOPE_ID_PEEK_CHARS = 4096;

/**
 * The value of the top-level string member `id` within the first `limit` characters of a JSON
 * object text, or `null` when none is found there (not an object, `id` not a string, `id` past
 * the limit, broken JSON before it). A repeated `id` gives the last one seen, as `JSON.parse`
 * does. The one JSON scanner of `platform/json.ts` reads it; linear in `limit`, never in the
 * body's size, and never throws.
 *
 * @example
 * peekEnvelopeId('{"jsonrpc":"2.0","id":"01J9Z3","params":[[' + '['.repeat(1e6)) // '01J9Z3'
 */
export function peekEnvelopeId(body: string, limit = ENVELOPE_ID_PEEK_CHARS): string | null {
  return leadingStringMember(body.length > limit ? body.slice(0, limit) : body, 'id');
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

/** What the peek and the body step return: the envelope `id` an answer echoes. */
export interface EnvelopeIdKnown {
  readonly envelopeId: string | null;
}

/**
 * The step that returns the envelope `id` of the bounded look above. The chain builder puts it
 * before `apiKeyAuth`, so a refused call still echoes its `id`.
 */
export function envelopeIdPeek(): Step<NoValues, EnvelopeIdKnown> {
  return step('envelopeIdPeek', (event) => {
    const envelopeId = peekEnvelopeId(bodyPrefix(event, ENVELOPE_ID_PEEK_CHARS));
    return { values: { envelopeId }, facts: { envelopeId } };
  });
}
