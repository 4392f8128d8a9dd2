/**
 * The local server's own limits and connection handling over real loopback sockets, as API
 * Gateway answers them (README, "Limits"): a client that half-closes after its request, the
 * request-receive timeout (408), the header quota counted exactly (431), a request that is not
 * HTTP (400), each with the gateway's JSON answer (never Node's empty one), an oversized body
 * answered at once and in a way clients can read (413), and the bound on ERP answers held at
 * once (-32009). No timing is asserted: "at once" is shown by clients that hold back the rest of
 * their body until the answer has come. The times these take are measured by hand (see the
 * CHANGELOG).
 */
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { GATEWAY_ANSWERS, type GatewayAnswer } from '../../lambdas/local/gateway-answers.ts';
import {
  MAX_DISCARDED_BODY_BYTES,
  MAX_REQUEST_BODY_BYTES,
  MAX_REQUEST_HEADER_BYTES,
} from '../../lambdas/local/server.ts';
import { AnswerBudget, SMALL_ANSWER_BYTES } from '../../lambdas/platform/answer-budget.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import { type Envelope, USERS, useErpAndProxy, useProxy, withProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';

/** Writes `bytes` on a new connection (then half-closes it when `halfClose`); resolves with all that came back. */
function rawExchange(url: string, bytes: string, options: { halfClose?: boolean } = {}): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      if (options.halfClose) socket.end(bytes);
      else socket.write(bytes);
    });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

const statusLine = (answer: string): string => answer.split('\r\n')[0] ?? '';

/** Checks a raw answer is the gateway's JSON answer (status, content type, body), not Node's empty one. */
function expectGatewayAnswer(answer: string, expected: GatewayAnswer): void {
  expect(statusLine(answer)).toMatch(new RegExp(`^HTTP/1\\.1 ${expected.status} `));
  const [head = '', body] = answer.split('\r\n\r\n');
  expect(head.toLowerCase()).toContain('content-type: application/json');
  expect(JSON.parse(body ?? '')).toEqual({ message: expected.message });
}

describe('a client that half-closes after sending its request (HTTP/1.0 style, nc -N)', () => {
  const { double, proxy } = useErpAndProxy();

  it.each(['1.0', '1.1'])('gets its answer over HTTP/%s', async (version) => {
    const body = JSON.stringify({
      id: 'half-closed',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: { url: double.url, db: 'erp_a', user_id: USERS.adminA.uid, api_key: USERS.adminA.apiKey },
    });
    const answer = await rawExchange(
      proxy.url,
      `POST /api/erp/execute HTTP/${version}\r\nHost: proxy\r\nContent-Type: application/json\r\n` +
        `x-api-key: ${TEST_PROXY_KEY}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect(statusLine(answer)).toBe('HTTP/1.1 200 OK');
    const envelope = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Envelope;
    expect(envelope.id).toBe('half-closed');
    expect(typeof envelope.result).toBe('number');
  });
});

describe('a request that has not fully arrived in time gets 408', () => {
  // A 1 s limit instead of 30 s, so the test need not wait; the default is checked in
  // test/unit/local-server.test.ts.
  it.each([
    ['headers that never end', 'POST /api/erp/execute HTTP/1.1\r\nHost: proxy\r\n'],
    [
      'a body that never ends',
      'POST /api/erp/execute HTTP/1.1\r\nHost: proxy\r\nContent-Length: 100\r\n\r\n{"id":',
    ],
  ])('%s', async (_label, bytes) => {
    await withProxy({ server: { requestReceiveTimeoutMs: 1_000 } }, async (proxy) => {
      const answer = await rawExchange(proxy.url, bytes);
      expect(statusLine(answer)).toBe('HTTP/1.1 408 Request Timeout');
      expectGatewayAnswer(answer, GATEWAY_ANSWERS.requestTimeout);
    });
  });
});

describe('a request that is not HTTP gets 400, with the JSON answer', () => {
  const proxy = useProxy();

  it.each([
    ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
    ['a header line without a colon', 'GET /_/about HTTP/1.1\r\nHost proxy\r\n\r\n'],
  ])('%s', async (_label, bytes) => {
    expectGatewayAnswer(await rawExchange(proxy.url, bytes), GATEWAY_ANSWERS.badRequest);
  });
});

describe('request line and headers over 10 240 bytes get 431, counted exactly', () => {
  const { proxy } = useErpAndProxy();

  /** A request whose line and headers (the empty line included) are exactly `total` bytes. */
  function head(total: number, extra = ''): string {
    const bare = `GET /_/about HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n${extra}X-Pad: \r\n\r\n`;
    return bare.replace('X-Pad: ', `X-Pad: ${'p'.repeat(total - bare.length)}`);
  }

  it.each([
    [MAX_REQUEST_HEADER_BYTES - 1, 'HTTP/1.1 200 OK'],
    [MAX_REQUEST_HEADER_BYTES, 'HTTP/1.1 200 OK'],
    [MAX_REQUEST_HEADER_BYTES + 1, 'HTTP/1.1 431 Request Header Fields Too Large'],
    [MAX_REQUEST_HEADER_BYTES + 40, 'HTTP/1.1 431 Request Header Fields Too Large'],
  ])('%i bytes: %s', async (total, expected) => {
    const bytes = head(total);
    expect(bytes.length).toBe(total);
    expect(statusLine(await rawExchange(proxy.url, bytes))).toBe(expected);
  });

  it("answers on every route with the gateway's JSON 431, from the exact count and from Node's parser alike", async () => {
    for (const route of ROUTES) {
      // Just over the quota (the exact count), and far over it (Node's parser gives up first).
      for (const total of [MAX_REQUEST_HEADER_BYTES + 1, 2 * MAX_REQUEST_HEADER_BYTES]) {
        // The same byte count whatever the request line (`POST /mcp` is shorter than `GET /_/about`).
        const line = `${route.method} ${route.path}`;
        const bytes = head(total + 'GET /_/about'.length - line.length).replace('GET /_/about', line);
        expectGatewayAnswer(await rawExchange(proxy.url, bytes), GATEWAY_ANSWERS.headersTooLarge);
      }
    }
  });

  it('counts every header line, however the bytes are split between headers', async () => {
    const extra = `${Array.from({ length: 40 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n`;
    expect(statusLine(await rawExchange(proxy.url, head(MAX_REQUEST_HEADER_BYTES, extra)))).toBe(
      'HTTP/1.1 200 OK',
    );
    expect(statusLine(await rawExchange(proxy.url, head(MAX_REQUEST_HEADER_BYTES + 1, extra)))).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large',
    );
  });
});

/**
 * Sends `head`, then the body from `bodyChunks` until `holdBackAfter` bytes of it are sent, then
 * waits for the whole answer (its `Content-Length`) before it sends the rest: the answer can only
 * come if the server gave it before the body was complete. Resolves with the answer, the bytes
 * the server read in all and whether the socket failed (EPIPE, a reset) on the way.
 */
function uploadHoldingBack(
  url: string,
  head: string,
  bodyChunks: () => Generator<Buffer>,
  holdBackAfter: number,
): Promise<{ answer: string; sentAfterAnswer: number; error: string | undefined }> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const chunks = bodyChunks();
    let sent = 0;
    let sentAfterAnswer = 0;
    let answered = false;
    let received = '';
    let error: string | undefined;
    const socket = connect(Number(port), '127.0.0.1');
    const pump = (): void => {
      for (let next = chunks.next(); !next.done; next = chunks.next()) {
        sent += next.value.length;
        if (answered) sentAfterAnswer += next.value.length;
        const flushed = socket.write(next.value);
        if (!answered && sent >= holdBackAfter) return; // wait for the answer
        if (!flushed) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const [answerHead = '', body = ''] = received.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(answerHead)?.[1]);
      if (!answered && received.includes('\r\n\r\n') && body.length >= length) {
        answered = true;
        pump();
      }
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error = failure.code ?? failure.message;
    });
    socket.on('close', () => resolve({ answer: received, sentAfterAnswer, error }));
  });
}

/** `total` bytes of body in 64 KiB chunks. */
function* plainBody(total: number): Generator<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < total; sent += chunk.length)
    yield chunk.subarray(0, Math.min(chunk.length, total - sent));
}

/** `total` bytes of body, chunked transfer coding, 64 KiB per chunk, then the last chunk. */
function* chunkedBody(total: number): Generator<Buffer> {
  for (const chunk of plainBody(total))
    yield Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  yield Buffer.from('0\r\n\r\n');
}

describe('a body over 6 MB gets a 413 at once, and the rest of the upload is read before the close', () => {
  const proxy = useProxy();
  const total = 20 * 1024 * 1024;
  const request = (framing: string): string =>
    `POST /api/erp/execute HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\n` +
    `x-api-key: ${TEST_PROXY_KEY}\r\n${framing}\r\n\r\n`;

  it('a declared Content-Length over 6 MB: answered before the body, 1 MiB of 20 MiB sent', async () => {
    const result = await uploadHoldingBack(
      proxy.url,
      request(`Content-Length: ${total}`),
      () => plainBody(total),
      1024 * 1024,
    );
    expectGatewayAnswer(result.answer, GATEWAY_ANSWERS.tooLarge);
    expect(result.error).toBeUndefined();
    // The client sent the rest after the answer, and the server read it all before it closed.
    expect(result.sentAfterAnswer).toBeGreaterThan(total - 2 * 1024 * 1024);
  });

  it('a chunked body: answered once it passes 6 MB, before the rest and the last chunk', async () => {
    const result = await uploadHoldingBack(
      proxy.url,
      request('Transfer-Encoding: chunked'),
      () => chunkedBody(total),
      MAX_REQUEST_BODY_BYTES + 256 * 1024,
    );
    expectGatewayAnswer(result.answer, GATEWAY_ANSWERS.tooLarge);
    expect(result.error).toBeUndefined();
    expect(result.sentAfterAnswer).toBeGreaterThan(total - MAX_REQUEST_BODY_BYTES - 1024 * 1024);
  });

  it('a declared length at 6 MB is read whole (not refused early)', async () => {
    const body = `{"id":"${'x'.repeat(MAX_REQUEST_BODY_BYTES - 9)}"}`;
    expect(Buffer.byteLength(body)).toBe(MAX_REQUEST_BODY_BYTES);
    const answer = await proxy.post('/api/erp/execute', body);
    expect(answer.status).toBe(400);
    expect((answer.json as Envelope).error?.code).toBe(-32600);
  });
});

describe('a body over 6 MB gets a 413 a Node client can read', () => {
  const { proxy } = useErpAndProxy();
  const overLimit = 20 * 1024 * 1024;

  /** Sends `size` bytes with node:http, chunked (no Content-Length), as a stream of 64 KiB. */
  function chunkedUpload(size: number): Promise<string> {
    return new Promise((resolve) => {
      const req = httpRequest(
        `${proxy.url}/api/erp/execute`,
        { method: 'POST', headers: { 'x-api-key': TEST_PROXY_KEY, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString('utf8');
          });
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let written = 0;
      const pump = (): void => {
        while (written < size) {
          written += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
  }

  it('node:http, a 20 MiB chunked upload', async () => {
    for (let i = 0; i < 3; i += 1)
      expect(await chunkedUpload(overLimit)).toBe('413 {"message":"Request Entity Too Large"}');
  });

  it('fetch, a 20 MiB streamed upload', async () => {
    for (let i = 0; i < 3; i += 1) {
      const chunk = new Uint8Array(64 * 1024).fill(97);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= overLimit) controller.close();
          else {
            sent += chunk.length;
            controller.enqueue(chunk);
          }
        },
      });
      const response = await fetch(`${proxy.url}/api/erp/execute`, {
        method: 'POST',
        headers: { 'x-api-key': TEST_PROXY_KEY },
        body,
        duplex: 'half',
      } as RequestInit & { duplex: 'half' });
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({ message: 'Request Entity Too Large' });
    }
  });

  it('fetch, a declared 7 MB body', async () => {
    const response = await fetch(`${proxy.url}/api/erp/execute`, {
      method: 'POST',
      headers: { 'x-api-key': TEST_PROXY_KEY },
      body: Readable.toWeb(Readable.from([Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, 'a')])) as ReadableStream,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(response.status).toBe(413);
  });

  it('the server keeps serving after an upload over the discard bound', async () => {
    const answer = await chunkedUpload(MAX_DISCARDED_BODY_BYTES + 1024 * 1024);
    // Past the bound the connection closes after the 413: the client reads it or meets the close.
    expect(answer).toMatch(/^(413 |error )/);
    expect((await proxy.get('/_/about')).status).toBe(200);
  });
});

describe('ERP answers held in memory at once are bounded', () => {
  const sockets = new Set<Socket>();
  afterEach(() => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  });

  it('an answer that does not fit beside the others is -32009; one that fits later passes', async () => {
    // Prepare: an ERP whose first answer (100,000 bytes declared, more than always fits) stays
    // half-sent until a second call has been answered (the test finishes it then); the proxy may
    // hold 150,000 bytes of answers.
    const answerBody = `{"jsonrpc":"2.0","id":1,"result":"${'r'.repeat(100_000 - 36)}"}`;
    expect(answerBody.length).toBe(100_000);
    expect(answerBody.length).toBeGreaterThan(SMALL_ANSWER_BYTES);
    const headers = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n`;
    let finishFirst: (() => void) | undefined;
    let requests = 0;
    const erp = createNetServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('data', () => {
        requests += 1;
        if (requests === 1) {
          socket.write(headers + answerBody.slice(0, 100));
          finishFirst = () => socket.write(answerBody.slice(100));
        } else {
          socket.write(headers + answerBody);
        }
      });
    });
    await new Promise<void>((resolve) => erp.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(erp.address() as AddressInfo).port}`;
    try {
      const answers = new AnswerBudget(150_000);
      await withProxy({ server: { answers } }, async (proxy) => {
        const call = (id: string) =>
          proxy.post('/api/erp/execute', {
            id,
            action: 'search_read',
            model_id: 'res.partner',
            params: [[]],
            erp_instance: { url, db: 'erp_a', user_id: 2, api_key: 'k'.repeat(40) },
          });
        // Act
        const first = call('first');
        // The first answer's declared 100,000 bytes are reserved once its headers have arrived.
        while (answers.heldBytes < 100_000) await new Promise((resolve) => setTimeout(resolve, 5));
        const second = await call('second');
        finishFirst?.();
        const firstAnswer = await first;
        const third = await call('third');
        // Assess
        expect((firstAnswer.json as Envelope).error).toBeNull();
        expect(second.status).toBe(502);
        const refused = (second.json as Envelope).error;
        expect(refused?.code).toBe(-32009);
        expect(refused?.message).toMatch(
          /holding 100000 bytes of ERP answers for other calls, and holds at most 150000 bytes at once/,
        );
        expect(refused?.message).toMatch(/has run on the ERP/);
        expect((third.json as Envelope).error).toBeNull();
      });
    } finally {
      await new Promise<void>((resolve) => erp.close(() => resolve()));
    }
  });
});
