/**
 * @module local/gateway-answers
 * The answers that come from the gateway in front of the functions, not from a function: API
 * Gateway's own (throttling, an unknown route, a body over 6 MB, a function that failed) and the
 * local server's, which answers the same way: `{"message": <reason>}`, `application/json`, never
 * an envelope. The local server writes them from here, and `docs/openapi.json` documents them
 * from here (bin/openapi.ts), so the two cannot drift.
 */

/** Where an answer can come from. */
export type GatewayAnswerSource = 'both' | 'local' | 'aws';

export interface GatewayAnswer {
  readonly status: number;
  /** The `message` of the body, the status's reason phrase. */
  readonly message: string;
  readonly source: GatewayAnswerSource;
  /** When it is given (one sentence, markdown). */
  readonly when: string;
}

/** The gateway's answers, by the name the local server uses for them. */
export const GATEWAY_ANSWERS = Object.freeze({
  badRequest: {
    status: 400,
    message: 'Bad Request',
    source: 'local',
    when: 'The request is not valid HTTP/1.1 (the local server; the connection closes).',
  },
  notFound: {
    status: 404,
    message: 'Not Found',
    source: 'both',
    when: 'No route has this method and path.',
  },
  requestTimeout: {
    status: 408,
    message: 'Request Timeout',
    source: 'local',
    when: 'The local server: the request line, headers and body did not all arrive within 30 s; the connection closes.',
  },
  tooLarge: {
    status: 413,
    message: 'Request Entity Too Large',
    source: 'both',
    when: 'The body is over 6 MB. The local server answers as soon as a declared `Content-Length`, or a chunked body, passes 6 MB, then reads and discards the rest of the body up to 64 MiB in all before it closes the connection, so a client still sending can read the answer.',
  },
  throttled: {
    status: 429,
    message: 'Too Many Requests',
    source: 'aws',
    when: "Deployed only: the stage's throttle (`throttleRateLimit`, `throttleBurstLimit`, all routes together) refused the call before any function ran; retry with back-off.",
  },
  headersTooLarge: {
    status: 431,
    message: 'Request Header Fields Too Large',
    source: 'both',
    when: "The request line and headers are over 10 240 bytes (API Gateway's quota; the local server counts each line with its CRLF). On AWS, API Gateway answers it itself with this status; the local server with this body.",
  },
  internal: {
    status: 500,
    message: 'Internal Server Error',
    source: 'both',
    when: 'The function failed without an answer: it crashed, or ran out of time.',
  },
} as const satisfies Record<string, GatewayAnswer>);

export type GatewayAnswerName = keyof typeof GATEWAY_ANSWERS;

/** The body of a gateway answer: `{"message":"Request Entity Too Large"}`. */
export function gatewayBody(answer: Pick<GatewayAnswer, 'message'>): string {
  return JSON.stringify({ message: answer.message });
}

/**
 * The headers that name a request on every answer of the local server: API Gateway's
 * `apigw-requestid` (its request id, which the function's event carries) and the functions'
 * `Request-Id`, which the server's own answers carry too (on AWS, API Gateway's own carry only
 * `apigw-requestid`).
 */
export function requestIdHeaders(requestId: string): Record<string, string> {
  return { 'apigw-requestid': requestId, 'request-id': requestId };
}

/**
 * A whole HTTP/1.1 response for a gateway answer, for a socket the HTTP parser gave up on
 * (`clientError`), where no `ServerResponse` exists. It closes the connection.
 */
export function rawGatewayResponse(
  answer: Pick<GatewayAnswer, 'status' | 'message'>,
  requestId: string,
): string {
  const body = gatewayBody(answer);
  return (
    `HTTP/1.1 ${answer.status} ${answer.message}\r\n` +
    'content-type: application/json\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `apigw-requestid: ${requestId}\r\nrequest-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}
