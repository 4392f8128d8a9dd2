/**
 * @module middleware/types
 * The Middy types shared by the proxy's middlewares and handlers.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { LambdaResponse } from '../core/envelope.ts';
import type { ProxyContext } from '../core/request-state.ts';

export type ProxyEvent = APIGatewayProxyEventV2;
export type ProxyMiddleware = middy.MiddlewareObj<ProxyEvent, LambdaResponse, Error, ProxyContext>;
export type ProxyRequest = middy.Request<ProxyEvent, LambdaResponse, Error, ProxyContext>;
