/**
 * The upstream HTTP client over real loopback sockets (the one unit suite that uses the network,
 * loopback addresses only): keep-alive reuse, the response size limit, the line between "did not
 * run" (-32004) and "may have run" (-32003), the one retry on a stale keep-alive socket, and a call
 * pinned to the DNS answer the limits counted it by (its own connections, no second lookup, the
 * certificate checked against the host name).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerBudget, SMALL_ANSWER_BYTES } from '../../lambdas/platform/answer-budget.ts';
import {
  ProxyError,
  ResponseTooLargeError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../lambdas/platform/errors.ts';
import {
  type ConnectTo,
  createHttpClient,
  type HttpClient,
  type UpstreamRequest,
} from '../../lambdas/upstream/http-client.ts';
import { loopbackCert } from '../support/tls-cert.ts';

interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

interface LoopbackServer {
  readonly url: URL;
  readonly requests: SeenRequest[];
  readonly sockets: Socket[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A `node:http` server on 127.0.0.1 (or `at`) that records connections and requests (body read first). */
async function startServer(
  handler: Handler,
  at: { readonly host?: string; readonly port?: number } = {},
): Promise<LoopbackServer> {
  const requests: SeenRequest[] = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = requests.length;
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      handler(req, res, index);
    });
  });
  server.on('connection', (socket: Socket) => sockets.push(socket));
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(at.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const loopback: LoopbackServer = {
    url: new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}/odoo/jsonrpc`),
    requests,
    sockets,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanups.push(loopback.close);
  return loopback;
}

function newClient(): HttpClient {
  // A long idle timeout: the tests decide when sockets go away, not a timer.
  const client = createHttpClient({ idleTimeoutMs: 60_000 });
  cleanups.push(() => client.close());
  return client;
}

function upstreamRequest(url: URL, overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
    body: '{"jsonrpc":"2.0","method":"call","params":{},"id":1}',
    signal: AbortSignal.timeout(10_000),
    timeoutMs: 10_000,
    maxResponseBytes: 1024 * 1024,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<ProxyError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProxyError);
    return error as ProxyError;
  }
  throw new Error('expected the call to fail');
}

/** Keeps the event loop from polling for `ms`, as a handler chain (or a frozen Lambda) does. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // no poll meanwhile
  }
}

const answerJson: Handler = (_req, res, index) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-seen': String(index) });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: index }));
};

describe('HttpClient.send', () => {
  it('sends the request as given and returns status, lower-cased headers and body', async () => {
    // Prepare
    const server = await startServer((_req, res) => {
      res.setHeader('X-Multi', ['a', 'b']);
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
    const client = newClient();
    // Act
    const response = await client.send(
      upstreamRequest(server.url, { headers: { 'x-forwarded-for': '203.0.113.9' } }),
    );
    // Assess
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['x-multi']).toBe('a, b');
    expect(response.body.toString('utf8')).toBe('{"ok":true}');
    const [seen] = server.requests;
    expect(seen?.method).toBe('POST');
    expect(seen?.path).toBe('/odoo/jsonrpc');
    expect(seen?.headers['x-forwarded-for']).toBe('203.0.113.9');
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength(seen?.body ?? '')));
    expect(seen?.body).toBe('{"jsonrpc":"2.0","method":"call","params":{},"id":1}');
    expect(seen?.headers.cookie).toBeUndefined();
  });

  it('sends a GET without a body', async () => {
    const server = await startServer(answerJson);
    const client = newClient();
    const { body: _body, ...withoutBody } = upstreamRequest(new URL('/web/version', server.url));
    const response = await client.send({ ...withoutBody, method: 'GET' });
    expect(response.status).toBe(200);
    expect(server.requests[0]?.method).toBe('GET');
    expect(server.requests[0]?.body).toBe('');
  });

  it('reuses one keep-alive connection for two calls', async () => {
    // Prepare: one connection per origin (see the next test for the default pool).
    const server = await startServer(answerJson);
    const client = createHttpClient({ idleTimeoutMs: 60_000, connectionsPerOrigin: 1 });
    cleanups.push(() => client.close());
    // Act
    const first = await client.send(upstreamRequest(server.url));
    const second = await client.send(upstreamRequest(server.url));
    // Assess
    expect(first.headers['x-seen']).toBe('0');
    expect(second.headers['x-seen']).toBe('1');
    expect(server.requests).toHaveLength(2);
    expect(server.sockets).toHaveLength(1);
  });

  it('reuses keep-alive connections with the default pool', async () => {
    // Prepare
    const server = await startServer(answerJson);
    const client = newClient();
    // Act
    for (let i = 0; i < 6; i += 1) await client.send(upstreamRequest(server.url));
    // Assess: a socket goes back to the pool just after its response ends, so back-to-back
    // calls may use a second connection; never one per call.
    expect(server.requests).toHaveLength(6);
    expect(server.sockets.length).toBeLessThanOrEqual(2);
  });

  it('adds no listener per call to a kept-alive socket (no MaxListenersExceededWarning)', async () => {
    // Prepare
    const server = await startServer(answerJson);
    const client = createHttpClient({ idleTimeoutMs: 60_000, connectionsPerOrigin: 1 });
    cleanups.push(() => client.close());
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      // Act: more calls on one socket than the default listener limit (10).
      for (let i = 0; i < 25; i += 1) {
        await client.send(upstreamRequest(server.url));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('warning', onWarning);
    }
    // Assess
    expect(server.sockets).toHaveLength(1);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('never follows a redirect', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302, { location: '/elsewhere' });
      res.end();
    });
    const response = await newClient().send(upstreamRequest(server.url));
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/elsewhere');
    expect(server.requests).toHaveLength(1);
  });
});

describe('the response size limit', () => {
  it('accepts a body of exactly the limit', async () => {
    const server = await startServer((_req, res) => res.end('x'.repeat(100)));
    const response = await newClient().send(upstreamRequest(server.url, { maxResponseBytes: 100 }));
    expect(response.body.length).toBe(100);
  });

  it('holds a chunked body (no content-length) to the exact limit: 100 bytes pass, 101 are -32009', async () => {
    // Prepare: two chunks, so the limit is crossed by the second one, not by a declared length.
    const chunked = (total: number) => (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('x'.repeat(60));
      setTimeout(() => res.end('x'.repeat(total - 60)), 5);
    };
    const exact = await startServer(chunked(100));
    const over = await startServer(chunked(101));
    // Act
    const response = await newClient().send(upstreamRequest(exact.url, { maxResponseBytes: 100 }));
    const error = await failure(newClient().send(upstreamRequest(over.url, { maxResponseBytes: 100 })));
    // Assess
    expect(response.body.length).toBe(100);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.code).toBe(-32009);
  });

  it('refuses a declared content-length over the limit with -32009', async () => {
    // Prepare
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '101' });
      res.end('x'.repeat(101));
    });
    // Act
    const error = await failure(newClient().send(upstreamRequest(server.url, { maxResponseBytes: 100 })));
    // Assess
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.code).toBe(-32009);
    expect(error.message).toMatch(/limit\/offset/);
  });

  it('refuses a streamed body once it passes the limit, without reading the rest', async () => {
    // Prepare: a chunked answer the server would keep writing up to 64 MB.
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const total = 64 * 1024 * 1024;
    let written = 0;
    let closedEarly: () => void = () => undefined;
    const serverGaveUp = new Promise<void>((resolve) => {
      closedEarly = resolve;
    });
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let stopped = false;
      res.on('close', () => {
        stopped = true;
        closedEarly();
      });
      const pump = (): void => {
        while (!stopped && written < total) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!stopped) res.end();
      };
      pump();
    });
    // Act
    const error = await failure(
      newClient().send(upstreamRequest(server.url, { maxResponseBytes: 256 * 1024 })),
    );
    await serverGaveUp;
    // Assess
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.code).toBe(-32009);
    expect(written).toBeLessThan(total);
  });
});

describe('the answer budget of the invocation the call runs in', () => {
  // Sizes in units of what always fits (an invocation's first SMALL_ANSWER_BYTES).
  const S = SMALL_ANSWER_BYTES;

  it('an answer that does not fit beside those of another invocation is -32009; one invocation counts all its answers', async () => {
    // Prepare: 10 S for all answers; another invocation holds 6 S.
    const server = await startServer((_req, res, index) => {
      // A declared length: reserved whole when the headers arrive.
      const body = index === 1 ? 'x'.repeat(100) : 'y'.repeat(6 * S);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.end(body);
    });
    const client = newClient();
    const budget = new AnswerBudget(10 * S);
    const other = budget.lease();
    await client.send(upstreamRequest(server.url, { answerLease: other }));
    const lease = budget.lease();
    // Act: this invocation's first answer (100 bytes) fits; its second (6 S) does not.
    const first = await client.send(upstreamRequest(server.url, { answerLease: lease }));
    const error = await failure(client.send(upstreamRequest(server.url, { answerLease: lease })));
    // Assess
    expect(first.body.length).toBe(100);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.message).toContain(`holding ${6 * S} bytes of ERP answers for other calls`);
    expect(error.message).toMatch(/does not fit beside them now/);
    expect(error.message).toMatch(/has run on the ERP: retry it shortly if it only reads, check first/);
    expect(budget.heldBytes).toBe(6 * S + 100);
    other.release();
    lease.release();
    expect(budget.heldBytes).toBe(0);
  });

  it('a small answer fits even when others hold the whole budget', async () => {
    const server = await startServer(answerJson);
    const budget = new AnswerBudget(10 * S);
    const other = budget.lease();
    other.reserve(10 * S);
    const answer = await newClient().send(upstreamRequest(server.url, { answerLease: budget.lease() }));
    expect(answer.status).toBe(200);
    other.release();
  });

  it('an answer without a declared length is counted as it arrives', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write('a'.repeat(3 * S));
      res.end('b'.repeat(3 * S));
    });
    const client = newClient();
    const budget = new AnswerBudget(10 * S);
    const other = budget.lease();
    other.reserve(6 * S);
    const error = await failure(
      client.send(upstreamRequest(server.url, { maxResponseBytes: 10 * S, answerLease: budget.lease() })),
    );
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error.message).toMatch(/does not fit beside them now/);
    other.release();
  });
});

describe('deadlines and broken connections', () => {
  it('a deadline already passed before connecting is -32004: the call did not run', async () => {
    // Prepare
    const server = await startServer(answerJson);
    const aborted = AbortSignal.abort();
    // Act
    const error = await failure(
      newClient().send(upstreamRequest(server.url, { signal: aborted, timeoutMs: 15_000 })),
    );
    // Assess
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.code).toBe(-32004);
    expect(error.message).toMatch(/did not run/);
    expect(error.message).toContain('15 s');
    expect(server.requests).toHaveLength(0);
  });

  it('a deadline passing after the request was sent is -32003: the call may have run', async () => {
    // Prepare: the server reads the request and never answers.
    const server = await startServer(() => undefined);
    // Act
    const error = await failure(
      newClient().send(upstreamRequest(server.url, { signal: AbortSignal.timeout(200), timeoutMs: 200 })),
    );
    // Assess
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error.code).toBe(-32003);
    expect(error.message).toMatch(/may have run/);
    expect(error.message).toContain('0.2 s');
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [1, /the proxy's one connection to this ERP was busy with another call/],
    [2, /the proxy's 2 connections to this ERP were all busy with other calls/],
  ])(
    'a call that waits for a free connection past its deadline is -32004, saying the pool (%i) was busy',
    async (size, busy) => {
      // Prepare: `size` connections per origin, each held by a call the server never answers.
      const server = await startServer(() => undefined);
      const client = createHttpClient({ idleTimeoutMs: 60_000, connectionsPerOrigin: size });
      cleanups.push(() => client.close());
      for (let i = 0; i < size; i += 1) {
        const holding = client.send(
          upstreamRequest(server.url, { signal: AbortSignal.timeout(2_000), timeoutMs: 2_000 }),
        );
        holding.catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Act
      const error = await failure(
        client.send(upstreamRequest(server.url, { signal: AbortSignal.timeout(200), timeoutMs: 200 })),
      );
      // Assess
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect(error.code).toBe(-32004);
      expect(error.message).toMatch(busy);
      expect(error.message).toMatch(/did not run/);
      expect(server.requests).toHaveLength(size);
    },
  );

  it('a call that waited for the pool and then could not connect names the wait, not only the connect', async () => {
    // Prepare: one connection per origin, held by a call the server drops after 100 ms; the agent
    // then opens a new connection for the waiting call, and that one never connects (its
    // address lookup never answers).
    const server = await startServer((req) => setTimeout(() => req.socket.destroy(), 100));
    let lookups = 0;
    const client = createHttpClient({
      idleTimeoutMs: 60_000,
      connectionsPerOrigin: 1,
      lookup: (_hostname, options, callback) => {
        lookups += 1;
        if (lookups > 1) return;
        const answer = callback as (error: null, address: unknown, family?: number) => void;
        if (options.all) answer(null, [{ address: '127.0.0.1', family: 4 }]);
        else answer(null, '127.0.0.1', 4);
      },
    });
    cleanups.push(() => client.close());
    const url = new URL(server.url);
    url.hostname = 'erp.test';
    const holding = client.send(upstreamRequest(url));
    holding.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Act
    const error = await failure(
      client.send(upstreamRequest(url, { signal: AbortSignal.timeout(1_000), timeoutMs: 1_000 })),
    );
    // Assess: both causes, in the order they happened.
    expect(lookups).toBe(2);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/waited [\d.]+ s of its 1 s for a free connection/);
    expect(error.message).toMatch(/one connection to this ERP was busy with another call/);
    expect(error.message).toMatch(/then could not connect in the [\d.]+ s left\. The call did not run/);
  });

  it('a connection attempt past its own cap is -32004 (did not run), before the request deadline', async () => {
    // Prepare: a lookup that never answers keeps the socket connecting.
    const client = createHttpClient({ lookup: () => undefined, connectTimeoutMs: 50 });
    cleanups.push(() => client.close());
    const started = performance.now();
    // Act
    const error = await failure(
      client.send(
        upstreamRequest(new URL('http://erp.invalid:8069'), {
          signal: AbortSignal.timeout(5_000),
          timeoutMs: 5_000,
        }),
      ),
    );
    // Assess
    expect(error.code).toBe(-32004);
    expect(error.message).toMatch(/timed out\. The call did not run/);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('a refused connection is -32004', async () => {
    // Prepare: a port that was just free.
    const server = await startServer(answerJson);
    const url = server.url;
    await server.close();
    // Act
    const error = await failure(newClient().send(upstreamRequest(url)));
    // Assess
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/refused the connection/);
  });

  it('a connection that breaks after the request was sent is -32003', async () => {
    // Prepare: the server reads the whole request, then drops the connection.
    const server = await startServer((req) => req.socket.destroy());
    // Act
    const error = await failure(newClient().send(upstreamRequest(server.url)));
    // Assess
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error.code).toBe(-32003);
    expect(error.message).toMatch(/broke after the request was sent/);
    expect(server.requests).toHaveLength(1);
  });
});

describe('stale keep-alive sockets', () => {
  /** Waits until the client's first socket is back in the pool (its response fully read). */
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

  it('a kept-alive socket the ERP reset while idle is retried once on a new connection', async () => {
    // Prepare: one answered call leaves a kept-alive socket in the pool.
    const server = await startServer(answerJson);
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    // Act: the ERP resets the idle socket and, in the same tick (before the client's event loop
    // learns of it, as after a Lambda thaw), the next call takes that socket. Its write fails
    // before a byte of the request is out.
    server.sockets[0]?.resetAndDestroy();
    const second = await client.send(upstreamRequest(server.url));
    // Assess: answered, on a second connection, and the ERP saw the call exactly once.
    expect(second.status).toBe(200);
    expect(server.sockets).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
  });

  it('a call after the client has seen the ERP close the idle socket goes out on a new connection', async () => {
    const server = await startServer(answerJson);
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    server.sockets[0]?.destroy();
    await settle();
    const second = await client.send(upstreamRequest(server.url));
    expect(second.headers['x-seen']).toBe('1');
    expect(server.sockets).toHaveLength(2);
  });

  it('does not retry once the request was written: a reset after it is -32003', async () => {
    // Prepare: the second call on the kept-alive socket is read by the ERP, then reset.
    const server = await startServer((req, res, index) => {
      if (index === 0) answerJson(req, res, index);
      else req.socket.resetAndDestroy();
    });
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    // Act
    const error = await failure(client.send(upstreamRequest(server.url)));
    // Assess: not retried (the ERP saw the call once) and reported as "may have run".
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error.message).toMatch(/may have run/);
    expect(server.requests).toHaveLength(2);
  });

  it('a kept-alive socket the ERP closed while the proxy was busy is not written into: a new connection carries the call', async () => {
    // Prepare
    const server = await startServer(answerJson);
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    // Act: the ERP closes the idle connection; its FIN reaches this machine while the event loop
    // is busy (no poll), so the pool still lists the socket when the next call takes it.
    server.sockets[0]?.destroy();
    blockEventLoop(30);
    const second = await client.send(upstreamRequest(server.url));
    // Assess: answered on a new connection; the ERP saw each call once.
    expect(second.headers['x-seen']).toBe('1');
    expect(server.sockets).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
  });

  it('a read-only call whose kept-alive connection closes without a byte of answer is retried once', async () => {
    // Prepare: the ERP reads the second request, then closes without answering.
    const server = await startServer((req, res, index) => {
      if (index === 1) req.socket.destroy();
      else answerJson(req, res, index);
    });
    const client = newClient();
    const { body: _body, ...get } = upstreamRequest(new URL('/web/version', server.url));
    await client.send({ ...get, method: 'GET', readOnly: true });
    await settle();
    // Act
    const second = await client.send({ ...get, method: 'GET', readOnly: true });
    // Assess: a read may run twice; the retry went out on a new connection.
    expect(second.headers['x-seen']).toBe('2');
    expect(server.sockets).toHaveLength(2);
  });

  it('a call that is not read-only is not retried then: it may have run (-32003)', async () => {
    const server = await startServer((req, res, index) => {
      if (index === 1) req.socket.destroy();
      else answerJson(req, res, index);
    });
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    const error = await failure(client.send(upstreamRequest(server.url)));
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error.message).toMatch(/may have run/);
    expect(server.requests).toHaveLength(2);
  });

  it("after such a close, the ERP's connections are no longer reused: later calls are not exposed to it", async () => {
    // Prepare: the ERP closes each connection 1 ms after it went idle (as a short nginx
    // keepalive_timeout does); the first close teaches the client.
    const server = await startServer((req, res, index) => {
      answerJson(req, res, index);
      res.on('finish', () => {
        const timer = setTimeout(() => req.socket.destroy(), 1);
        req.socket.once('data', () => clearTimeout(timer));
      });
    });
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Act
    for (let i = 0; i < 5; i += 1) await client.send(upstreamRequest(server.url));
    // Assess: one connection per call, none written into a closing one.
    expect(server.requests).toHaveLength(6);
    expect(server.sockets).toHaveLength(6);
  });

  it.each([
    // The ERP announces a 2 s keep-alive, so the socket may idle 1 s; the proxy's own limit is long.
    { limit: 'what the ERP announced', keepAlive: 'timeout=2', idleTimeoutMs: 60_000, frozenMs: 1_100 },
    // The ERP announces nothing; the proxy's own idle limit is 200 ms.
    { limit: "the proxy's idle timeout", keepAlive: undefined, idleTimeoutMs: 200, frozenMs: 300 },
  ])(
    'a kept-alive socket idle past $limit, its timer not yet run (a thawed Lambda), is not written into',
    async ({ keepAlive, idleTimeoutMs, frozenMs }) => {
      // Prepare: one answered call; the pool keeps its socket.
      const server = await startServer((req, res, index) => {
        if (keepAlive) res.setHeader('keep-alive', keepAlive);
        answerJson(req, res, index);
      });
      const client = createHttpClient({ idleTimeoutMs });
      cleanups.push(() => client.close());
      await client.send(upstreamRequest(server.url));
      await settle();
      // Act: the event loop is frozen past that limit (as a Lambda between invocations): the
      // socket's idle timer cannot run, so the pool still lists it.
      blockEventLoop(frozenMs);
      const second = await client.send(upstreamRequest(server.url));
      // Assess: the idle time, on the wall clock, expired the socket before writing: answered on
      // a new connection, and the ERP saw each call once.
      expect(second.headers['x-seen']).toBe('1');
      expect(server.sockets).toHaveLength(2);
      expect(server.requests).toHaveLength(2);
    },
  );

  it('a call still waiting for its answer survives a pause longer than the idle timeout', async () => {
    // Prepare: a 100 ms idle timeout; the ERP holds the first call's answer until a second call
    // has arrived, which starts 150 ms (more than the idle timeout) after the first one.
    let releaseFirst: (() => void) | undefined;
    const server = await startServer((req, res, index) => {
      if (index === 0) releaseFirst = () => answerJson(req, res, index);
      else {
        answerJson(req, res, index);
        releaseFirst?.();
      }
    });
    const client = createHttpClient({ idleTimeoutMs: 100 });
    cleanups.push(() => client.close());
    const first = client.send(upstreamRequest(server.url));
    first.catch(() => undefined);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Act
    const second = await client.send(upstreamRequest(server.url));
    // Assess: the first call kept its connection and got its answer.
    expect(second.headers['x-seen']).toBe('1');
    expect((await first).headers['x-seen']).toBe('0');
  });

  it('a socket handed straight from a finished call to a queued one follows Keep-Alive: timeout too', async () => {
    // Prepare: one connection per origin; the ERP announces a 1 s keep-alive (under the 1 s
    // margin: never reuse). Two calls at once: the second waits for the first one's socket.
    const server = await startServer((req, res, index) => {
      res.setHeader('keep-alive', 'timeout=1');
      answerJson(req, res, index);
    });
    const client = createHttpClient({ idleTimeoutMs: 60_000, connectionsPerOrigin: 1 });
    cleanups.push(() => client.close());
    // Act
    const answers = await Promise.all([
      client.send(upstreamRequest(server.url)),
      client.send(upstreamRequest(server.url)),
    ]);
    // Assess: both answered, each on a connection of its own.
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(server.requests).toHaveLength(2);
    expect(server.sockets).toHaveLength(2);
  });

  it('when the one retry fails too, its own failure is reported', async () => {
    // Prepare: one answered call, then the ERP goes away entirely while the proxy is busy.
    const server = await startServer(answerJson);
    const client = newClient();
    await client.send(upstreamRequest(server.url));
    await settle();
    const closing = server.close();
    blockEventLoop(30);
    // Act
    const error = await failure(client.send(upstreamRequest(server.url)));
    await closing;
    // Assess: the stale socket was not written into; the new connection was refused.
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/refused the connection/);
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a connection that was refused (-32004)', async () => {
    const server = await startServer(answerJson);
    const url = server.url;
    await server.close();
    const client = newClient();
    const error = await failure(client.send(upstreamRequest(url)));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/refused the connection/);
  });
});

describe('a call pinned to the DNS answer the limits counted it by', () => {
  /** Lets a finished call's socket go back into the pool. */
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

  /** The same port on 127.0.0.2 and 127.0.0.3: two addresses of one name, `erp.test`. */
  async function twoAddresses(): Promise<{ readonly two: LoopbackServer; readonly three: LoopbackServer }> {
    const two = await startServer(answerJson, { host: '127.0.0.2' });
    const three = await startServer(answerJson, { host: '127.0.0.3', port: Number(two.url.port) });
    return { two, three };
  }

  /** A client whose resolver answers `erp.test` with 127.0.0.2, counting its questions. */
  function clientResolving(): { readonly client: HttpClient; readonly asked: string[] } {
    const asked: string[] = [];
    const lookup: LookupFunction = (hostname, options, callback) => {
      asked.push(hostname);
      const address = { address: '127.0.0.2', family: 4 };
      setImmediate(() => (options.all ? callback(null, [address]) : callback(null, address.address, 4)));
    };
    const client = createHttpClient({ idleTimeoutMs: 60_000, lookup });
    cleanups.push(() => client.close());
    return { client, asked };
  }

  const nameUrl = (server: LoopbackServer): URL => new URL(`http://erp.test:${server.url.port}/odoo/jsonrpc`);
  const pinnedTo = (address: string): ConnectTo => ({
    hostname: 'erp.test',
    address: { address, family: 4 },
  });

  it("sends it to the keyed address, with the URL's Host, and asks no resolver", async () => {
    const { two, three } = await twoAddresses();
    const { client, asked } = clientResolving();
    const answer = await client.send(upstreamRequest(nameUrl(two), { connectTo: pinnedTo('127.0.0.3') }));
    expect(answer.status).toBe(200);
    expect(three.requests).toHaveLength(1);
    expect(three.requests[0]?.headers.host).toBe(`erp.test:${two.url.port}`);
    expect(two.requests).toHaveLength(0);
    expect(asked).toEqual([]);
  });

  it('keeps its connections by address: one kept alive for the name, or for another address, never carries it', async () => {
    const { two, three } = await twoAddresses();
    const { client } = clientResolving();
    // The name, resolved at connect (127.0.0.2): a connection kept alive for `erp.test`.
    await client.send(upstreamRequest(nameUrl(two)));
    await settle();
    // Pinned to 127.0.0.3: not that connection.
    await client.send(upstreamRequest(nameUrl(two), { connectTo: pinnedTo('127.0.0.3') }));
    await settle();
    expect(three.requests).toHaveLength(1);
    // Pinned to 127.0.0.2 twice: a connection of its own, then kept alive for it.
    await client.send(upstreamRequest(nameUrl(two), { connectTo: pinnedTo('127.0.0.2') }));
    await settle();
    await client.send(upstreamRequest(nameUrl(two), { connectTo: pinnedTo('127.0.0.2') }));
    expect(two.requests).toHaveLength(3);
    expect(two.sockets).toHaveLength(2);
    expect(three.sockets).toHaveLength(1);
  });

  it('with an answer no limit keys, connects within it without a second lookup, and reuses a kept-alive connection only if it is at one of its addresses', async () => {
    const { two, three } = await twoAddresses();
    const { client, asked } = clientResolving();
    await client.send(upstreamRequest(nameUrl(two)));
    await settle();
    expect(asked).toEqual(['erp.test']);
    // The call's answer is 127.0.0.3: the connection kept alive at 127.0.0.2 does not carry it.
    const onlyThree: ConnectTo = { hostname: 'erp.test', addresses: [{ address: '127.0.0.3', family: 4 }] };
    await client.send(upstreamRequest(nameUrl(two), { connectTo: onlyThree }));
    expect(three.requests).toHaveLength(1);
    expect(asked).toEqual(['erp.test']);
    await settle();
    // An answer holding 127.0.0.2: a connection kept alive there may carry it.
    await client.send(upstreamRequest(nameUrl(two)));
    await settle();
    const withTwo: ConnectTo = {
      hostname: 'erp.test',
      addresses: [
        { address: '127.0.0.3', family: 4 },
        { address: '127.0.0.2', family: 4 },
      ],
    };
    await client.send(upstreamRequest(nameUrl(two), { connectTo: withTwo }));
    expect(two.requests).toHaveLength(3);
    expect(two.sockets).toHaveLength(2);
  });

  it('fails as a DNS failure when its name did not resolve: no lookup, no kept-alive connection (-32004)', async () => {
    const { two } = await twoAddresses();
    const { client, asked } = clientResolving();
    await client.send(upstreamRequest(nameUrl(two)));
    await settle();
    const notFound: NodeJS.ErrnoException = Object.assign(new Error('getaddrinfo ENOTFOUND erp.test'), {
      code: 'ENOTFOUND',
    });
    const error = await failure(
      client.send(upstreamRequest(nameUrl(two), { connectTo: { hostname: 'erp.test', failure: notFound } })),
    );
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toBe(
      'Cannot resolve ERP host erp.test (DNS). The call did not run; retrying is safe.',
    );
    expect(two.requests).toHaveLength(1);
    expect(asked).toEqual(['erp.test']);
  });

  it('is honoured for its own host only', async () => {
    const server = await startServer(answerJson);
    const { client } = clientResolving();
    await client.send(upstreamRequest(server.url, { connectTo: pinnedTo('127.0.0.3') }));
    expect(server.requests).toHaveLength(1);
  });

  it('checks the certificate against the host name (TLS server name), not the address connected to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pinned-tls-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const named = certificateFor(dir, 'erp.test', 'DNS:erp.test');
    const byAddress = loopbackCert(join(dir, 'ip'));
    const serve = async (cert: { cert: Buffer; key: Buffer }) => {
      const server = createHttpsServer(cert, (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sni: (req.socket as TLSSocket).servername, host: req.headers.host }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      return (server.address() as AddressInfo).port;
    };
    const client = createHttpClient({
      idleTimeoutMs: 60_000,
      tls: { ca: [named.cert, byAddress.cert].join('\n') },
    });
    cleanups.push(() => client.close());
    const pinned = pinnedTo('127.0.0.1');
    // A certificate for erp.test: the pinned call passes, and the server sees erp.test (SNI, Host).
    const good = await serve(named);
    const answer = await client.send(
      upstreamRequest(new URL(`https://erp.test:${good}/`), { method: 'GET', connectTo: pinned }),
    );
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ sni: 'erp.test', host: `erp.test:${good}` });
    // A certificate for the address only: refused, though the address is the one connected to.
    const other = await serve(byAddress);
    const error = await failure(
      client.send(
        upstreamRequest(new URL(`https://erp.test:${other}/`), { method: 'GET', connectTo: pinned }),
      ),
    );
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(
      /^TLS handshake with erp\.test:\d+ failed \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
    );
  });
});

/** A self-signed certificate for `subject`, with `altName` (`DNS:name`), made by `openssl`. */
function certificateFor(dir: string, subject: string, altName: string): { cert: Buffer; key: Buffer } {
  const certFile = join(dir, `${subject}.pem`);
  const keyFile = join(dir, `${subject}.key`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
      .concat(['-subj', `/CN=${subject}`, '-addext', `subjectAltName=${altName}`])
      .concat(['-keyout', keyFile, '-out', certFile]),
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}
