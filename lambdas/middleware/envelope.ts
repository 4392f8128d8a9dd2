/**
 * @module middleware/envelope
 * Envelope shaping: the only middleware that turns errors into responses (through
 * `errorResponse`), and the last step of every response (compression, the 6 MB check).
 * Register it right after `observe`, before everything that may throw.
 */
import { errorResponse } from '../core/envelope.ts';
import { finalizeResponse, negotiateEncoding } from '../core/response-encoding.ts';
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

export function envelopeMiddleware(): ProxyMiddleware {
  // The encoding is negotiated once, here: the core reads it (a client that accepts gzip or br
  // may receive larger answers) and the response is compressed with it.
  const envelopeBefore = (request: ProxyRequest): void => {
    request.context.responseEncoding = negotiateEncoding(request.event.headers?.['accept-encoding']);
  };
  const envelopeAfter = (request: ProxyRequest): void => {
    if (request.response) {
      request.response = finalizeResponse(
        request.context.proxy,
        request.response,
        request.context.responseEncoding,
      );
    }
  };
  const envelopeOnError = (request: ProxyRequest): void => {
    const response = errorResponse(request.context.proxy, request.error);
    request.response = finalizeResponse(request.context.proxy, response, request.context.responseEncoding);
  };
  return { before: envelopeBefore, after: envelopeAfter, onError: envelopeOnError };
}
