/**
 * @module middleware/types
 * The Middy types shared by the proxy's middlewares and handlers.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { LambdaResponse } from '../core/envelope.ts';
import type { ProxyContext } from '../core/request-facts.ts';

export type ProxyEvent = APIGatewayProxyEventV2;
export type ProxyMiddleware = middy.MiddlewareObj<ProxyEvent, LambdaResponse, Error, ProxyContext>;
export type ProxyRequest = middy.Request<ProxyEvent, LambdaResponse, Error, ProxyContext>;

/**
 * Whether an invocation event is an API Gateway HTTP API event of payload format 2.0, the only
 * kind the chains take: `version` `'2.0'` and a `requestContext.http` object, both set by API
 * Gateway on every request.
 */
export function isHttpApiEvent(event: unknown): event is ProxyEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { version, requestContext } = event as { version?: unknown; requestContext?: { http?: unknown } };
  return (
    version === '2.0' &&
    typeof requestContext === 'object' &&
    requestContext !== null &&
    typeof requestContext.http === 'object' &&
    requestContext.http !== null
  );
}
