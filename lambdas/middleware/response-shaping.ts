/**
 * @module middleware/response-shaping
 * Envelope shaping: the only middleware that turns errors into responses (through
 * `errorResponse`, the error table's one mapping), and the last step of every response
 * (compression, the 6 MB check). It returns what it learned (the outcome, the error code, the
 * response size, and the facts a thrown error carried) to the request's record. The chain
 * builder (`handlers/chain.ts`) registers it right after `observe`, before everything that may
 * throw.
 */
import type { ErrorShape } from '../core/envelope.ts';
import { errorResponse } from '../core/envelope.ts';
import { type ApiName, factsOf, type ProxyContext } from '../core/request-facts.ts';
import { type Encoding, finalizeResponse, negotiateEncoding } from '../core/response-encoding.ts';
import { knownValues, learn } from './step.ts';
import type { ProxyEvent, ProxyMiddleware, ProxyRequest } from './types.ts';

/**
 * The response encoding of this request, from its `Accept-Encoding` header: the core reads it (a
 * client that accepts gzip or br may receive larger answers, through the inbound call) and the
 * response is compressed with it. A function of the header alone, so the edge and this middleware
 * each ask for it (a few string operations) and nothing is kept on the context.
 */
export function responseEncodingOf(event: ProxyEvent): Encoding | undefined {
  return negotiateEncoding(event.headers?.['accept-encoding']);
}

/** The shape of this request's error answers: its API, and the envelope `id` a step returned. */
function shapeOf(api: ApiName, context: ProxyContext): ErrorShape {
  const { envelopeId } = knownValues(context);
  return { api, envelopeId: typeof envelopeId === 'string' ? envelopeId : null };
}

export function envelopeMiddleware(api: ApiName): ProxyMiddleware {
  const envelopeAfter = (request: ProxyRequest): void => {
    if (request.response) {
      const encoding = responseEncodingOf(request.event);
      const final = finalizeResponse(shapeOf(api, request.context), request.response, encoding);
      request.response = final.response;
      learn(request.context, undefined, final.facts);
    }
  };
  const envelopeOnError = (request: ProxyRequest): void => {
    const shape = shapeOf(api, request.context);
    const refused = errorResponse(shape, request.error);
    const encoding = responseEncodingOf(request.event);
    const final = finalizeResponse(shape, refused.response, encoding);
    request.response = final.response;
    learn(request.context, undefined, Object.assign({}, factsOf(request.error), refused.facts, final.facts));
  };
  return { after: envelopeAfter, onError: envelopeOnError };
}
