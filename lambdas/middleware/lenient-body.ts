/**
 * @module middleware/lenient-body
 * Reads the body once, without failing: the envelope `id` must be echoed even when the request
 * is later refused (bad key, bad license, invalid fields). Parse failures are recorded on the
 * request state and reported by the handler's validation step, after authentication.
 */
import { isJsonObject } from '../platform/json.ts';
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

/** Decodes an API Gateway payload 2.0 body to text. */
export function bodyText(event: { body?: string; isBase64Encoded?: boolean }): string {
  if (event.body === undefined || event.body === null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

export function lenientBody(): ProxyMiddleware {
  const lenientBodyBefore = (request: ProxyRequest): void => {
    const state = request.context.proxy;
    const encoding = request.event.headers?.['content-encoding']?.trim();
    if (encoding && encoding.toLowerCase() !== 'identity') {
      // API Gateway passes a compressed body on as it came; nothing here decompresses it.
      state.bodyError = `the request body is compressed (Content-Encoding: ${encoding.slice(0, 40)}); send it uncompressed`;
      return;
    }
    // A leading byte order mark is ignored, as RFC 8259 allows.
    const sent = bodyText(request.event);
    const text = sent.charCodeAt(0) === 0xfeff ? sent.slice(1) : sent;
    if (text.trim() === '') {
      state.bodyError = 'the request body is empty';
      return;
    }
    try {
      state.body = JSON.parse(text);
      state.bodyText = text;
    } catch (error) {
      // Node's messages quote the text around the error, which may be part of a key: keep only
      // the position.
      const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
      state.bodyError = `the request body is not valid JSON${position ? ` (error at position ${position})` : ''}`;
      return;
    }
    if (isJsonObject(state.body) && typeof state.body.id === 'string') state.envelopeId = state.body.id;
  };
  return { before: lenientBodyBefore };
}
