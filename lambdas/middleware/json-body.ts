/**
 * @module middleware/json-body
 * Reads the request body, once, after the caller is authenticated and licensed (no unbounded work
 * happens for a caller without a valid key). The value is parsed by `@middy/http-json-body-parser`
 * (the design card's parser, run here on a copy of the event: its content-type check off, its
 * errors turned into the README's), then one scan of `platform/json.ts` gives the depth and each
 * top-level member's text. Around the parser, this step keeps what the README documents and the
 * package does not do:
 *
 * - a `Content-Encoding` other than `identity` is refused (API Gateway passes a compressed body on
 *   as it came, and nothing here decompresses it);
 * - a leading byte order mark is ignored, as RFC 8259 allows;
 * - bytes that are not UTF-8 are refused, never rewritten (a lenient decoder would turn them into
 *   U+FFFD and forward that to the ERP). A body that arrives as bytes (base64: API Gateway does
 *   this for content types it does not take for text, and the local server for any body that is
 *   not UTF-8) is decoded with a fatal decoder; a body that arrives as text is refused when it
 *   holds a lone surrogate, which no UTF-8 byte sequence decodes to;
 * - the body is parsed whatever its `Content-Type` (callers such as `curl -d` send none or a
 *   form type);
 * - each top-level member's text is kept, so `params`, `keyword` and `kwargs` are forwarded byte
 *   for byte;
 * - a body that cannot be read is not an error here: its reason is kept, and the core answers it
 *   in the API's own way (-32700 on v1 and version, a plain-text 400 on v2).
 */
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { InboundBody } from '../core/inbound-call.ts';
import { isJsonObject, type JsonDocument, jsonDocumentOf, syntaxPositionOf } from '../platform/json.ts';
import type { Authenticated } from './api-key-auth.ts';
import type { EnvelopeIdKnown } from './envelope-id.ts';
import type { Licensed } from './license-check.ts';
import { type Step, step } from './step.ts';
import type { ProxyEvent, ProxyRequest } from './types.ts';

/** What the step returns: the body, and the envelope `id` read from all of it. */
export interface BodyRead extends EnvelopeIdKnown {
  readonly body: InboundBody;
}

/** The reason given for a body that is not UTF-8 (the bytes themselves are never quoted). */
export const NOT_UTF8_PROBLEM = 'the request body is not valid UTF-8; send JSON encoded as UTF-8';

/** Strict: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD. The BOM is kept. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * `String.prototype.isWellFormed` (Node 20; the project's TypeScript lib is ES2023, which does not
 * declare it): false when the text holds a lone surrogate. Measured at well under 1 ms for 6 MB,
 * against 6 ms for a regular expression.
 */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Decodes an API Gateway payload 2.0 body to text; `undefined` when it is not UTF-8 (see the
 * module comment).
 */
export function bodyText(event: { body?: string; isBase64Encoded?: boolean }): string | undefined {
  if (event.body === undefined || event.body === null) return '';
  if (!event.isBase64Encoded) return isWellFormed(event.body) ? event.body : undefined;
  try {
    return strictUtf8.decode(Buffer.from(event.body, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * `disableContentTypeCheck` is an option of the package's code and documentation (6.4.5) that its
 * type declarations leave out.
 */
type ParserOptions = NonNullable<Parameters<typeof httpJsonBodyParser>[0]> & {
  readonly disableContentTypeCheck?: boolean;
};
/** The package's parser: `before` replaces `event.body` with the parsed value, or throws (415). */
const parser = httpJsonBodyParser<ProxyEvent>({ disableContentTypeCheck: true } as ParserOptions);

/**
 * The text parsed by the package, on a copy of the event holding only the text (the event itself
 * stays as API Gateway sent it). Its error carries `JSON.parse`'s message as `cause.message`,
 * whose position is kept; the text around it is never quoted (it may hold a key).
 */
async function parsed(
  text: string,
): Promise<
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly position: number | undefined }
> {
  const copy = { event: { body: text, isBase64Encoded: false, headers: {} } } as unknown as ProxyRequest;
  try {
    await parser.before?.(copy);
  } catch (error) {
    const cause: unknown = error instanceof Error ? error.cause : undefined;
    const message = isJsonObject(cause) && typeof cause.message === 'string' ? cause.message : '';
    return { ok: false, position: syntaxPositionOf(new Error(message)) };
  }
  // `before` replaced the copy's text with the parsed value.
  return { ok: true, value: (copy.event as { body: unknown }).body };
}

/**
 * The body as the core gets it, from the JSON document read from its text. Where it is not JSON,
 * the problem names a position, never the text around it (it may be a key).
 */
export function inboundBodyOfDocument(document: JsonDocument): InboundBody {
  if (document.ok) return document;
  const at = document.position === undefined ? '' : ` (error at position ${document.position})`;
  return { ok: false, problem: `the request body is not valid JSON${at}` };
}

/** The body as the core gets it, from the text as sent (a leading byte order mark is ignored). */
export async function inboundBodyOf(sent: string): Promise<InboundBody> {
  const text = sent.charCodeAt(0) === 0xfeff ? sent.slice(1) : sent;
  if (text.trim() === '') return { ok: false, problem: 'the request body is empty' };
  const value = await parsed(text);
  return inboundBodyOfDocument(value.ok ? jsonDocumentOf(text, value.value) : value);
}

function readBody(event: ProxyEvent): InboundBody | Promise<InboundBody> {
  const encoding = event.headers?.['content-encoding']?.trim();
  if (encoding && encoding.toLowerCase() !== 'identity') {
    return {
      ok: false,
      problem: `the request body is compressed (Content-Encoding: ${encoding.slice(0, 40)}); send it uncompressed`,
    };
  }
  const sent = bodyText(event);
  if (sent === undefined) return { ok: false, problem: NOT_UTF8_PROBLEM };
  return inboundBodyOf(sent);
}

/**
 * The body step (see the module comment). It needs an authenticated, licensed caller: the chain
 * builder adds it after `licenseCheck`, so no unbounded work is done for anyone else.
 */
export function jsonBody(): Step<Authenticated & Licensed, BodyRead> {
  return step('jsonBody', async (event) => {
    const body = await readBody(event);
    // The whole body is known now: its `id` is the one to echo, even where the bounded look found
    // another (a repeated member) or none (past the look's reach); none when it cannot be read.
    const id = body.ok && isJsonObject(body.value) ? body.value.id : undefined;
    const envelopeId = typeof id === 'string' ? id : null;
    return { values: { body, envelopeId }, facts: { envelopeId } };
  });
}
