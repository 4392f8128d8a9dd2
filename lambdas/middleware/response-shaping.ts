/**
 * @module middleware/envelope
 * Envelope shaping: the only middleware that turns errors into responses (through
 * `errorResponse`), and the last step of every response (compression, the 6 MB check).
 * Register it right after `observe`, before everything that may throw.
 */
import { errorResponse } from '../core/envelope.ts';
import type { ProxyContext } from '../core/request-state.ts';
import { type Encoding, finalizeResponse, negotiateEncoding } from '../core/response-encoding.ts';
import type { ProxyEvent, ProxyMiddleware, ProxyRequest } from './types.ts';

/**
 * The response encoding of this request, negotiated from `Accept-Encoding` once, on first use,
 * and kept on the context: the core reads it (a client that accepts gzip or br may receive larger
 * answers, through the inbound call) and the response is compressed with it.
 */
export function responseEncodingOf(event: ProxyEvent, context: ProxyContext): Encoding | undefined {
  if (!('responseEncoding' in context)) {
    context.responseEncoding = negotiateEncoding(event.headers?.['accept-encoding']);
  }
  return context.responseEncoding;
}

export function envelopeMiddleware(): ProxyMiddleware {
  const envelopeAfter = (request: ProxyRequest): void => {
    if (request.response) {
      const encoding = responseEncodingOf(request.event, request.context);
      request.response = finalizeResponse(request.context.proxy, request.response, encoding);
    }
  };
  const envelopeOnError = (request: ProxyRequest): void => {
    const response = errorResponse(request.context.proxy, request.error);
    const encoding = responseEncodingOf(request.event, request.context);
    request.response = finalizeResponse(request.context.proxy, response, encoding);
  };
  return { after: envelopeAfter, onError: envelopeOnError };
}
