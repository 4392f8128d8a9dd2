/**
 * API Gateway HTTP API events (payload format 2.0), as API Gateway sends them for a route of the
 * route table, and a Lambda context, for tests that invoke a handler the way Lambda does.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type Route, routeKey } from '../../lambdas/platform/routes.ts';

/**
 * The event of a request to `route`: request id `req-<path>`, no body unless `overrides` gives
 * one; `overrides` replaces top-level fields (headers, body...).
 */
export function httpApiEvent(
  route: Pick<Route, 'method' | 'path'>,
  overrides: Partial<APIGatewayProxyEventV2> = {},
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: routeKey(route),
    rawPath: route.path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: {
        method: route.method,
        path: route.path,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.7',
        userAgent: 'test',
      },
      requestId: `req-${route.path}`,
      routeKey: routeKey(route),
      stage: '$default',
      time: '21/Nov/2026:00:00:00 +0000',
      timeEpoch: 0,
    },
    isBase64Encoded: false,
    ...overrides,
  };
}

/** A handler as a test invokes it: an event and a context in, an API Gateway result out. */
export type InvokedHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

/** A Lambda context of the function `erp-proxy-<fn>`, with 28 s left. */
export function lambdaContext(fn: string) {
  return {
    functionName: `erp-proxy-${fn}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:erp-proxy-${fn}`,
    memoryLimitInMB: '512',
    awsRequestId: 'aws-req',
    logGroupName: 'g',
    logStreamName: 's',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 28_000,
  };
}
