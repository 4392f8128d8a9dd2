/**
 * @module middleware/lenient-body
 * Reads the body once, without failing: the envelope `id` must be echoed even when the request
 * is later refused (bad key, bad license, invalid fields). Parse failures are recorded on the
 * request state and reported by the handler's validation step, after authentication.
 */
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

/** Decodes an API Gateway payload 2.0 body to text. */
export function bodyText(event: { body?: string; isBase64Encoded?: boolean }): string {
  if (event.body === undefined || event.body === null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

export function lenientBody(): ProxyMiddleware {
  const lenientBodyBefore = (request: ProxyRequest): void => {
    const state = request.context.proxy;
    const text = bodyText(request.event);
    if (text.trim() === '') {
      state.bodyError = 'the request body is empty';
      return;
    }
    try {
      state.body = JSON.parse(text);
    } catch (error) {
      state.bodyError = `the request body is not valid JSON (${error instanceof Error ? error.message : 'parse error'})`;
      return;
    }
    const body = state.body;
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const id = (body as { id?: unknown }).id;
      if (typeof id === 'string') state.envelopeId = id;
    }
  };
  return { before: lenientBodyBefore };
}
