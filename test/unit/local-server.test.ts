/**
 * The local server's API Gateway emulation: the payload 2.0 event built from a real `node:http`
 * request (loopback), and the Lambda-like context.
 */
import { createServer, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../lambdas/handlers/runtime.ts';
import {
  buildContext,
  buildEvent,
  createLocalServer,
  LOCAL_FUNCTION_TIMEOUT_MS,
  localFunctionTimeoutMs,
  MAX_REQUEST_HEADER_BYTES,
  REQUEST_RECEIVE_TIMEOUT_MS,
  requestTimeoutSettings,
} from '../../lambdas/local/server.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { upstreamTimeoutMs } from '../../lambdas/upstream/time-budget.ts';
import { useProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const ROUTE = 'POST /api/erp/execute';

let port = 0;
const events: APIGatewayProxyEventV2[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    events.push(buildEvent(req, Buffer.concat(chunks), ROUTE));
    res.end('ok');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Sent {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: Buffer | string;
}

/** Sends one request over loopback and returns the event the server built from it. */
async function eventFor(sent: Sent = {}): Promise<APIGatewayProxyEventV2> {
  const before = events.length;
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: sent.method ?? 'POST',
        path: sent.path ?? '/api/erp/execute',
        headers: sent.headers ?? {},
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(sent.body);
  });
  expect(events.length).toBe(before + 1);
  return events[before]!;
}

describe('buildEvent', () => {
  it('builds a payload 2.0 event with route, path and request context', async () => {
    // Act
    const event = await eventFor({ headers: { 'User-Agent': 'unit-test/1' } });
    // Assess
    expect(event.version).toBe('2.0');
    expect(event.routeKey).toBe(ROUTE);
    expect(event.rawPath).toBe('/api/erp/execute');
    expect(event.requestContext.routeKey).toBe(ROUTE);
    expect(event.requestContext.stage).toBe('$default');
    expect(event.requestContext.http.method).toBe('POST');
    expect(event.requestContext.http.path).toBe('/api/erp/execute');
    expect(event.requestContext.http.protocol).toBe('HTTP/1.1');
    expect(event.requestContext.http.sourceIp).toBe('127.0.0.1');
    expect(event.requestContext.http.userAgent).toBe('unit-test/1');
    expect(event.requestContext.domainName).toBe(`127.0.0.1:${port}`);
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(10_000);
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('lower-cases header names and keeps values as sent', async () => {
    const event = await eventFor({ headers: { 'X-Request-Timeout': '7', 'X-API-Key': 'Mixed-Case-Value' } });
    expect(event.headers['x-request-timeout']).toBe('7');
    expect(event.headers['x-api-key']).toBe('Mixed-Case-Value');
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
  });

  it('joins repeated headers with a comma, as API Gateway does', async () => {
    const event = await eventFor({
      headers: { 'X-Dup': ['a', 'b', 'c'], 'Accept-Encoding': ['gzip', 'br'] },
    });
    expect(event.headers['x-dup']).toBe('a,b,c');
    expect(event.headers['accept-encoding']).toBe('gzip,br');
  });

  it('moves cookies out of the headers into cookies', async () => {
    // Act
    const event = await eventFor({ headers: { Cookie: 'session_id=abc; theme=dark' } });
    // Assess
    expect(event.cookies).toEqual(['session_id=abc', 'theme=dark']);
    expect(event.headers.cookie).toBeUndefined();
  });

  it('has no cookies when none were sent', async () => {
    const event = await eventFor();
    expect(event.cookies).toBeUndefined();
  });

  it('keeps the raw query string without "?" and collects repeated parameters', async () => {
    const event = await eventFor({ path: '/api/erp/execute?a=1&b=x%20y&a=3' });
    expect(event.rawQueryString).toBe('a=1&b=x%20y&a=3');
    expect(event.queryStringParameters).toEqual({ a: '1,3', b: 'x y' });
    expect(event.rawPath).toBe('/api/erp/execute');
  });

  it('has an empty raw query string and no parameters without a query', async () => {
    const event = await eventFor();
    expect(event.rawQueryString).toBe('');
    expect(event.queryStringParameters).toBeUndefined();
  });

  it('passes a JSON body as a string', async () => {
    const json = '{"id":"1","name":"Zoë"}';
    const event = await eventFor({
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: json,
    });
    expect(event.body).toBe(json);
    expect(event.isBase64Encoded).toBe(false);
  });

  it.each(['text/plain', 'application/vnd.api+json', 'application/x-www-form-urlencoded'])(
    'passes a %s body as a string',
    async (contentType) => {
      const event = await eventFor({ headers: { 'Content-Type': contentType }, body: 'a=1' });
      expect(event.body).toBe('a=1');
      expect(event.isBase64Encoded).toBe(false);
    },
  );

  it('passes a text-typed body that is not UTF-8 base64-encoded, its bytes unchanged', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xc3, 0x28, 0x7d]);
    for (const contentType of ['application/json', 'text/plain; charset=utf-8']) {
      const event = await eventFor({ headers: { 'Content-Type': contentType }, body: bytes });
      expect(event.isBase64Encoded).toBe(true);
      expect(event.body).toBe(bytes.toString('base64'));
    }
  });

  it('passes a binary body base64-encoded', async () => {
    // Prepare
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7b]);
    // Act
    const event = await eventFor({ headers: { 'Content-Type': 'application/octet-stream' }, body: bytes });
    // Assess
    expect(event.isBase64Encoded).toBe(true);
    expect(event.body).toBe(bytes.toString('base64'));
  });

  it('base64-encodes a binary content type even when the bytes are valid UTF-8', async () => {
    const event = await eventFor({ headers: { 'Content-Type': 'image/png' }, body: 'PNG' });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64').toString('utf8')).toBe('PNG');
  });

  it('without a content type, passes valid UTF-8 as text and anything else as base64', async () => {
    const text = await eventFor({ body: '{"id":"é"}' });
    const binary = await eventFor({ body: Buffer.from([0xc3, 0x28]) });
    expect(text.body).toBe('{"id":"é"}');
    expect(text.isBase64Encoded).toBe(false);
    expect(binary.isBase64Encoded).toBe(true);
    expect(binary.body).toBe(Buffer.from([0xc3, 0x28]).toString('base64'));
  });

  it('has no body when none was sent', async () => {
    const event = await eventFor({ method: 'GET', path: '/_/about' });
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
    expect(event.requestContext.http.method).toBe('GET');
  });

  it('gives every event a fresh request id', async () => {
    const first = await eventFor();
    const second = await eventFor();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(first.requestContext.requestId).toMatch(uuid);
    expect(second.requestContext.requestId).toMatch(uuid);
    expect(second.requestContext.requestId).not.toBe(first.requestContext.requestId);
  });
});

describe('buildContext', () => {
  it('names the function and carries the request id', () => {
    const context = buildContext('execute-v2', 'req-42');
    expect(context.functionName).toBe('erp-proxy-execute-v2');
    expect(context.awsRequestId).toBe('req-42');
    expect(context.invokedFunctionArn).toBe(
      'arn:aws:lambda:local:000000000000:function:erp-proxy-execute-v2',
    );
    expect(context.callbackWaitsForEmptyEventLoop).toBe(false);
  });

  it('starts at the emulated function timeout by default', () => {
    const remaining = buildContext('version', 'r').getRemainingTimeInMillis();
    expect(remaining).toBeLessThanOrEqual(LOCAL_FUNCTION_TIMEOUT_MS);
    expect(remaining).toBeGreaterThan(LOCAL_FUNCTION_TIMEOUT_MS - 1_000);
  });

  it('lasts 28 s as deployed, longer when ERP_MAX_TIMEOUT asks for more than a 28 s function leaves', () => {
    expect(localFunctionTimeoutMs({ maxTimeoutSeconds: 25 })).toBe(LOCAL_FUNCTION_TIMEOUT_MS);
    expect(localFunctionTimeoutMs({ maxTimeoutSeconds: 5 })).toBe(LOCAL_FUNCTION_TIMEOUT_MS);
    expect(localFunctionTimeoutMs({ maxTimeoutSeconds: 60 })).toBe(63_000);
    // What the handler then computes: x-request-timeout 40 under ERP_MAX_TIMEOUT=60 gets 40 s,
    // not the 26.5 s a 28 s function would leave.
    const context = buildContext('execute-v1', 'r', localFunctionTimeoutMs({ maxTimeoutSeconds: 60 }));
    const budget = upstreamTimeoutMs({
      header: '40',
      defaultSeconds: 15,
      maxSeconds: 60,
      remainingMs: context.getRemainingTimeInMillis(),
    });
    expect(budget).toBe(40_000);
  });

  it('counts the remaining time down', async () => {
    // Prepare
    const context = buildContext('aux', 'r', 5_000);
    const first = context.getRemainingTimeInMillis();
    // Act
    await new Promise((resolve) => setTimeout(resolve, 30));
    const later = context.getRemainingTimeInMillis();
    // Assess
    expect(first).toBeLessThanOrEqual(5_000);
    expect(later).toBeLessThan(first);
  });

  it('never reports negative time', async () => {
    const context = buildContext('aux', 'r', 5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(context.getRemainingTimeInMillis()).toBe(0);
  });
});

describe('the local server at the HTTP level (as API Gateway answers before any Lambda runs)', () => {
  const crashes: unknown[] = [];
  const proxy = useProxy({ server: { onCrash: (error) => crashes.push(error) } });
  let proxyPort = 0;

  beforeAll(() => {
    proxyPort = Number(new URL(proxy.url).port);
  });

  /** Writes raw bytes on a fresh connection; resolves with what came back when it closed. */
  function raw(bytes: string, closeAfterMs?: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(proxyPort, '127.0.0.1', () => {
        socket.write(bytes);
        if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs);
      });
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
  }

  it('a client that goes away mid-body is no crash, and the server keeps serving', async () => {
    const head = 'POST /api/erp/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
    await raw(`${head}Content-Length: 1000\r\n\r\n{"id":"gone",`, 50);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(crashes).toEqual([]);
    const after = await proxy.get('/_/about');
    expect(after.status).toBe(200);
  });

  it('answers a body sent to an unknown route with 404 and closes the connection without reading it', async () => {
    const answer = await raw(
      'POST /nope HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('{"message":"Not Found"}');
  });

  it('refuses request headers over the API Gateway quota (10 240 bytes) with 431', async () => {
    const big = await proxy.get('/_/about', { 'x-padding': 'p'.repeat(MAX_REQUEST_HEADER_BYTES) });
    expect(big.status).toBe(431);
    const fits = await proxy.get('/_/about', { 'x-padding': 'p'.repeat(8 * 1024) });
    expect(fits.status).toBe(200);
  });
});

describe('the request-receive timeout (408)', () => {
  it('is 30 s by default, as documented', () => {
    expect(REQUEST_RECEIVE_TIMEOUT_MS).toBe(30_000);
  });

  it('reaches Node so that the 408 comes by the limit: checked every 250 ms against the limit less 250 ms', () => {
    expect(requestTimeoutSettings(30_000)).toEqual({
      requestTimeout: 29_750,
      headersTimeout: 29_750,
      connectionsCheckingInterval: 250,
    });
    // Short limits (tests) are checked four times over.
    expect(requestTimeoutSettings(1_000)).toEqual({
      requestTimeout: 750,
      headersTimeout: 750,
      connectionsCheckingInterval: 250,
    });
    expect(requestTimeoutSettings(400).connectionsCheckingInterval).toBe(100);
  });

  it('the server built without options uses the 30 s default', () => {
    const server = createLocalServer(createRuntime(loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY })));
    const settings = server as typeof server & { connectionsCheckingInterval: number };
    expect(settings.requestTimeout + settings.connectionsCheckingInterval).toBe(REQUEST_RECEIVE_TIMEOUT_MS);
    expect(settings.headersTimeout).toBe(settings.requestTimeout);
    expect(settings.connectionsCheckingInterval).toBe(250);
  });
});
