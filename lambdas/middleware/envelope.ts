/**
 * @module middleware/envelope
 * Envelope shaping: the only middleware that turns errors into responses (through
 * `errorResponse`), and the last step of every response (compression, the 6 MB check).
 * Register it right after `observe`, before everything that may throw.
 */
import { errorResponse } from '../core/envelope.ts';
import { finalizeResponse } from '../core/response-encoding.ts';
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

function acceptEncoding(request: ProxyRequest): string | undefined {
  return request.event.headers?.['accept-encoding'];
}

export function envelopeMiddleware(): ProxyMiddleware {
  const envelopeAfter = (request: ProxyRequest): void => {
    if (request.response) {
      request.response = finalizeResponse(request.context.proxy, request.response, acceptEncoding(request));
    }
  };
  const envelopeOnError = (request: ProxyRequest): void => {
    const response = errorResponse(request.context.proxy, request.error);
    request.response = finalizeResponse(request.context.proxy, response, acceptEncoding(request));
  };
  return { after: envelopeAfter, onError: envelopeOnError };
}
