/**
 * @module local/server
 * Runs the Lambda handlers behind `node:http`, the way API Gateway (HTTP API, payload 2.0)
 * would: routes from the shared route table, events with lower-cased headers and a string (or
 * base64) body, a Lambda-like context with `getRemainingTimeInMillis`, and the gateway's own
 * answers (gateway-answers.ts) for unknown routes (404), oversized bodies (413) and headers (431),
 * requests that do not arrive in time (408) and requests that are not HTTP (400). Each request
 * gets a request id of its own (a UUID), which every answer names (`apigw-requestid`, as API
 * Gateway adds it, and `Request-Id`). This is the only code that knows both HTTP and the event
 * shape.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createHandler as createExecuteV1Handler } from '../handlers/execute-v1.ts';
import { createHandler as createExecuteV2Handler } from '../handlers/execute-v2.ts';
import { createHandler as createMcpHandler } from '../handlers/mcp.ts';
import { createHandler as createOperatorHandler } from '../handlers/operator.ts';
import type { Runtime } from '../handlers/runtime.ts';
import { createHandler as createVersionHandler } from '../handlers/version.ts';
import { AnswerBudget, type AnswerLease, type WithAnswerLease } from '../platform/answer-budget.ts';
import { LOCAL_FUNCTION_TIMEOUT_MS, localFunctionTimeoutMs } from '../platform/function-timeout.ts';
import { type FunctionName, matchRoute } from '../platform/routes.ts';
import {
  GATEWAY_ANSWERS,
  type GatewayAnswer,
  gatewayBody,
  rawGatewayResponse,
  requestIdHeaders,
} from './gateway-answers.ts';

/** Lambda's synchronous invocation payload limit; API Gateway answers 413 above it here. */
export const MAX_REQUEST_BODY_BYTES = 6 * 1024 * 1024;
export { LOCAL_FUNCTION_TIMEOUT_MS, localFunctionTimeoutMs };
/**
 * API Gateway HTTP API quota: request line and headers together, 10 240 bytes. Counted as
 * {@link requestHeadBytes} does; Node's own `maxHeaderSize` counts only the target, names and
 * values, so it lets up to ~40 bytes more through and is kept as the parser's backstop only
 * (its overflow gets the same 431 answer, through `clientError`).
 */
export const MAX_REQUEST_HEADER_BYTES = 10 * 1024;
/** A request (headers and body) must arrive within this; the server then answers 408 and closes. */
export const REQUEST_RECEIVE_TIMEOUT_MS = 30_000;
/**
 * How often Node looks for requests past their time (its default, 30 s, made the 408 of a 30 s
 * limit come at 30-60 s). The limit given to Node is this much shorter, so the 408 comes by the
 * limit, at most this much early.
 */
export const REQUEST_TIMEOUT_CHECK_INTERVAL_MS = 250;
/**
 * A body over {@link MAX_REQUEST_BODY_BYTES} is answered 413 at once, and then still read, and
 * discarded, up to this many bytes in all before the connection closes: a client still uploading
 * when the connection closes would get EPIPE (or a reset that loses the answer) instead of
 * reading the 413. An upload larger than this meets the close at this point.
 */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;
/**
 * The ERP answers the local server holds in memory at once, all invocations together (see
 * platform/answer-budget.ts). Eight of the largest answers a gzip client may get (29 MiB each by
 * default) do not fit at once; one call alone always fits.
 */
export const ANSWER_MEMORY_BYTES = 128 * 1024 * 1024;

/** Node's timeout settings for a receive limit: the 408 comes by `receiveTimeoutMs`. */
export function requestTimeoutSettings(receiveTimeoutMs: number): {
  readonly requestTimeout: number;
  readonly headersTimeout: number;
  readonly connectionsCheckingInterval: number;
} {
  const interval = Math.max(1, Math.min(REQUEST_TIMEOUT_CHECK_INTERVAL_MS, Math.floor(receiveTimeoutMs / 4)));
  const timeout = receiveTimeoutMs - interval;
  return { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: interval };
}

/**
 * The request line and the header lines in bytes, as clients write them: `METHOD target
 * HTTP/1.1`, each header as `Name: value`, every line with its CRLF, and the empty line that ends
 * them. (The parser drops whitespace around values, so extra spaces a client sends are not
 * counted.) Node decodes the target and the headers one byte per character.
 */
export function requestHeadBytes(req: IncomingMessage): number {
  let size = `${req.method ?? ''} ${req.url ?? ''} HTTP/${req.httpVersion}\r\n`.length + 2;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    size += (req.rawHeaders[i] ?? '').length + 2 + (req.rawHeaders[i + 1] ?? '').length + 2;
  return size;
}

/** Lambda stops a function at its timeout; API Gateway then answers 500, as `onCrash` does here. */
function withFunctionTimeout<T>(invocation: Promise<T>, timeoutMs: number, fn: FunctionName): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${fn}: function timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([invocation, timeout]).finally(() => clearTimeout(timer));
}

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

const TEXT_TYPES =
  /^(text\/|application\/(json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|javascript|x-www-form-urlencoded))/i;

/**
 * Whether the body goes to the function as text. A body that is not UTF-8 goes as base64 whatever
 * its content type, so its bytes arrive unchanged and the function can refuse them (README,
 * Limits); `toString('utf8')` would silently turn them into U+FFFD.
 */
function isTextual(contentType: string | undefined, body: Buffer): boolean {
  if (contentType && !TEXT_TYPES.test(contentType.trim())) return false;
  // No content type: pass valid UTF-8 through as text, like API Gateway does for JSON clients.
  return isUtf8(body);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function clfTime(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** The request target as a URL (the host part is a placeholder; only path and query are used). */
function requestUrl(req: IncomingMessage): URL {
  return new URL(req.url ?? '/', 'http://localhost');
}

/** Builds an API Gateway HTTP API payload 2.0 event from a Node request (`requestId`: a new UUID by default). */
export function buildEvent(
  req: IncomingMessage,
  body: Buffer,
  route: string,
  url: URL = requestUrl(req),
  requestId: string = randomUUID(),
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    const value = req.rawHeaders[i + 1] ?? '';
    if (name === 'cookie') {
      cookies = [...(cookies ?? []), ...value.split(/;\s*/).filter(Boolean)];
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams)
    query[key] = query[key] === undefined ? value : `${query[key]},${value}`;
  const now = new Date();
  const textual = isTextual(headers['content-type'], body);
  return {
    version: '2.0',
    routeKey: route,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: route,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

/** A Lambda-like context: the handlers only rely on what a real one offers. */
export function buildContext(
  fn: FunctionName,
  requestId: string,
  timeoutMs = LOCAL_FUNCTION_TIMEOUT_MS,
): Context {
  const deadline = Date.now() + timeoutMs;
  const name = `erp-proxy-${fn}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The context an invocation gets: its answer lease travels on it, as a value (no async scope). */
function withLease(context: Context, lease: AnswerLease): Context & WithAnswerLease {
  return { ...context, answerLease: lease };
}

interface StructuredResult {
  statusCode?: number;
  headers?: Record<string, string | number | boolean>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: Buffer | string,
): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/**
 * Writes a handler result as API Gateway would (payload 2.0 response inference included), with
 * its `apigw-requestid`.
 */
function writeResult(res: ServerResponse, result: unknown, requestId: string): void {
  if (result === null || typeof result !== 'object' || !('statusCode' in result)) {
    // Payload 2.0: anything without a statusCode is a 200 JSON body.
    const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    send(res, 200, { 'content-type': 'application/json', 'apigw-requestid': requestId }, body);
    return;
  }
  const structured = result as StructuredResult;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  headers['apigw-requestid'] = requestId;
  if (structured.cookies?.length) res.setHeader('set-cookie', structured.cookies);
  const raw = structured.body ?? '';
  const body = structured.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  send(res, structured.statusCode ?? 200, headers, body);
}

/**
 * The chunks as one buffer. `Buffer.concat` copies through `TypedArray.prototype.set`, measured on
 * this project's benchmark VM at 18-26 ms for a 6 MB body of 64 KiB chunks; copying each chunk
 * into one `allocUnsafe` buffer took 0.4-1 ms. Every body goes through here, before the key check.
 */
function joinChunks(chunks: readonly Buffer[], size: number): Buffer {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const joined = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(joined, offset);
  return joined;
}

/**
 * Answers with a gateway answer now, then reads and discards the rest of the request body (up
 * to {@link MAX_DISCARDED_BODY_BYTES} in all, counting the `alreadyRead` bytes read before)
 * before the response ends, which closes the connection. The whole answer is written at once
 * (its `Content-Length` known), so a client reads it while it is still sending; ending the
 * response only once the body is in keeps the connection open for the client's last bytes, so
 * it meets no EPIPE. This is what nginx does with a body over `client_max_body_size`.
 */
function answerThenDiscard(
  req: IncomingMessage,
  res: ServerResponse,
  answer: GatewayAnswer,
  requestId: string,
  alreadyRead = 0,
): void {
  if (res.headersSent) return;
  const body = gatewayBody(answer);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...requestIdHeaders(requestId),
    connection: 'close',
  });
  if (req.complete) {
    res.end(body);
    return;
  }
  res.write(body);
  let read = alreadyRead;
  const finish = (): void => {
    req.off('data', onData);
    if (!res.writableEnded) res.end();
  };
  const onData = (chunk: Buffer): void => {
    read += chunk.length;
    if (read > MAX_DISCARDED_BODY_BYTES) finish();
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_DISCARDED_BODY_BYTES) finish();
  else {
    req.on('data', onData);
    req.once('end', finish);
    // Aborted by the client: nothing more will come.
    req.once('close', finish);
  }
  req.resume();
}

/**
 * Reads the body up to the limit; `undefined` once it is over (413 sent at once, the rest
 * discarded) or when the client went away mid-body (nothing to answer: on AWS such a request
 * never reaches Lambda).
 */
function readBody(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_REQUEST_BODY_BYTES) {
      answerThenDiscard(req, res, GATEWAY_ANSWERS.tooLarge, requestId);
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      // A chunked body (or one longer than it declared) passed the limit: answer now.
      req.off('data', onData);
      req.off('end', onEnd);
      chunks.length = 0;
      answerThenDiscard(req, res, GATEWAY_ANSWERS.tooLarge, requestId, size);
      resolve(undefined);
    };
    const onEnd = (): void => resolve(joinChunks(chunks, size));
    req.on('data', onData);
    req.on('end', onEnd);
    // 'aborted' / ECONNRESET: the client closed the connection before its body was complete.
    req.on('error', () => resolve(undefined));
  });
}

/** The gateway answer for an error of Node's HTTP parser or its request timeout. */
function clientErrorAnswer(code: string | undefined): GatewayAnswer {
  if (code === 'HPE_HEADER_OVERFLOW') return GATEWAY_ANSWERS.headersTooLarge;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return GATEWAY_ANSWERS.requestTimeout;
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return GATEWAY_ANSWERS.tooLarge;
  return GATEWAY_ANSWERS.badRequest;
}

/**
 * Answers what Node's HTTP parser refuses (headers over `maxHeaderSize`, a request that is not
 * HTTP) and requests past the receive timeout with the gateway's JSON answers instead of Node's
 * empty ones. As Node does, nothing is written once a response has started on the connection;
 * the connection is then closed. After the answer, what the client still sends is read and
 * dropped (up to {@link MAX_DISCARDED_BODY_BYTES}) until it closes, so it can read the answer;
 * the receive timeout ends a connection that never closes.
 */
function handleClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) {
      // The parser fails again on each further chunk; only the receive timeout ends it here.
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.destroy();
      return;
    }
    answered.add(socket);
    // Node's own check before it writes its default answer: no response started on the socket.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    let discarded = 0;
    socket.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > MAX_DISCARDED_BODY_BYTES) socket.destroy();
    });
    socket.end(rawGatewayResponse(clientErrorAnswer(error.code), randomUUID()));
  });
}

export interface LocalServerOptions {
  /** Emulated Lambda timeout per invocation; default `localFunctionTimeoutMs(runtime.config)`. */
  readonly functionTimeoutMs?: number;
  /** A request must arrive within this (408); default {@link REQUEST_RECEIVE_TIMEOUT_MS}. */
  readonly requestReceiveTimeoutMs?: number;
  /** ERP answers held at once, all invocations together; default {@link ANSWER_MEMORY_BYTES}. */
  readonly answerMemoryBytes?: number;
  /** The budget itself, for a caller that watches it; default one of `answerMemoryBytes`. */
  readonly answers?: AnswerBudget;
  /** Called for a handler crash (the client only sees API Gateway's generic 500). */
  readonly onCrash?: (error: unknown) => void;
}

/** Creates (but does not start) the local HTTP server in front of the handlers of every function. */
export function createLocalServer(runtime: Runtime, options: LocalServerOptions = {}): Server {
  const handlers: Record<FunctionName, LambdaHandler> = {
    'execute-v1': createExecuteV1Handler(runtime) as unknown as LambdaHandler,
    'execute-v2': createExecuteV2Handler(runtime) as unknown as LambdaHandler,
    version: createVersionHandler(runtime) as unknown as LambdaHandler,
    aux: createOperatorHandler(runtime) as unknown as LambdaHandler,
    mcp: createMcpHandler(runtime) as unknown as LambdaHandler,
  };

  const functionTimeoutMs = options.functionTimeoutMs ?? localFunctionTimeoutMs(runtime.config);
  const answers = options.answers ?? new AnswerBudget(options.answerMemoryBytes ?? ANSWER_MEMORY_BYTES);
  const invoke = async (
    fn: FunctionName,
    event: APIGatewayProxyEventV2,
    context: Context,
  ): Promise<unknown> => {
    const lease = answers.lease();
    // The lease ends with the handler, also one the emulated timeout gave up on (it still runs).
    const invocation = handlers[fn](event, withLease(context, lease));
    const release = (): void => lease.release();
    invocation.then(release, release);
    return withFunctionTimeout(invocation, functionTimeoutMs, fn);
  };
  const server = createServer(
    {
      maxHeaderSize: MAX_REQUEST_HEADER_BYTES,
      ...requestTimeoutSettings(options.requestReceiveTimeoutMs ?? REQUEST_RECEIVE_TIMEOUT_MS),
    },
    (req, res) => {
      // The request's id: its event's `requestContext.requestId`, named by whatever answers it.
      const requestId = randomUUID();
      if (requestHeadBytes(req) > MAX_REQUEST_HEADER_BYTES) {
        answerThenDiscard(req, res, GATEWAY_ANSWERS.headersTooLarge, requestId);
        return;
      }
      const url = requestUrl(req);
      // A route of the table, or the route that answers this method 405 (GET /mcp).
      const matched = matchRoute(req.method ?? 'GET', url.pathname);
      if (!matched) {
        // A body sent to an unknown route is not read: the connection closes after the 404.
        const hasBody =
          req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
        req.resume();
        send(
          res,
          404,
          {
            'content-type': 'application/json',
            ...requestIdHeaders(requestId),
            ...(hasBody ? { connection: 'close' } : {}),
          },
          gatewayBody(GATEWAY_ANSWERS.notFound),
        );
        return;
      }
      readBody(req, res, requestId)
        .then(async (body) => {
          if (body === undefined) return;
          const { route, key } = matched;
          const event = buildEvent(req, body, key, url, requestId);
          const context = buildContext(route.fn, requestId, functionTimeoutMs);
          writeResult(res, await invoke(route.fn, event, context), requestId);
        })
        .catch((error: unknown) => {
          options.onCrash?.(error);
          send(
            res,
            500,
            { 'content-type': 'application/json', ...requestIdHeaders(requestId) },
            gatewayBody(GATEWAY_ANSWERS.internal),
          );
        });
    },
  );
  handleClientErrors(server);
  server.keepAliveTimeout = 5_000;
  // A client that half-closes after its request (HTTP/1.0 style, `nc -N`) still gets the answer:
  // by default Node's HTTP server ends the connection as soon as the client's side ends, before
  // the answer is written. (Node reads this flag; @types/node does not declare it.)
  Object.assign(server, { httpAllowHalfOpen: true });
  return server;
}
