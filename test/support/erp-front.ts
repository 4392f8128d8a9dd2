/**
 * A fault upstream in front of the ERP double, for the client's retry tests: it counts the
 * calls the ERP was asked to run and, per call, forwards it to the double, answers it itself
 * (a 409 lock conflict, a 503), or hangs. It can also stop listening and start again on the same
 * port, so the proxy's next connection is refused. Loopback only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A call as the front saw it. */
export interface FrontCall {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/**
 * What the front does with one call: forward it (at once, or after `delayMs`: a slow ERP that
 * still runs the call), answer it, or never answer.
 */
export type FrontAction =
  | 'forward'
  | 'hang'
  | { delayMs: number }
  | { status: number; headers?: Record<string, string>; body: string };

export interface ErpFront {
  /** `http://127.0.0.1:<port>`, the same across {@link ErpFront.stop} and {@link ErpFront.start}. */
  readonly url: string;
  /** Every call the front received, in order. */
  readonly calls: FrontCall[];
  /** The calls that asked the ERP to run a model method (JSON-2, or `execute_kw` on /jsonrpc). */
  executeCalls(): FrontCall[];
  /** Decides what happens to each call; `forward` by default. */
  plan: (call: FrontCall, executeIndex: number) => FrontAction;
  /** Stops listening and drops every connection: the next connection is refused. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Whether a call asks the ERP to run a model method (not a version lookup). */
export function isExecute(call: FrontCall): boolean {
  return call.path.startsWith('/json/2/') || (call.path === '/jsonrpc' && call.body.includes('"execute_kw"'));
}

/** Starts a front on a free port of 127.0.0.1 that forwards to `erpUrl`. */
export async function startErpFront(erpUrl: string): Promise<ErpFront> {
  const calls: FrontCall[] = [];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const front: ErpFront = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    calls,
    executeCalls: () => calls.filter(isExecute),
    plan: () => 'forward',
    stop: async () => {
      const current = server;
      server = undefined;
      if (!current) return;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => current.close(() => resolve()));
    },
    start: async () => {
      const created = createServer((request, response) => void handle(request, response));
      created.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => created.listen(port, '127.0.0.1', resolve));
      port = (created.address() as AddressInfo).port;
      server = created;
    },
    close: () => front.stop(),
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const call: FrontCall = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      body: Buffer.concat(chunks).toString('utf8'),
    };
    calls.push(call);
    const action = front.plan(call, isExecute(call) ? front.executeCalls().length - 1 : -1);
    if (action === 'hang') return;
    if (typeof action === 'object' && 'delayMs' in action) {
      await new Promise((resolve) => setTimeout(resolve, action.delayMs));
    } else if (action !== 'forward') {
      response.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      response.end(action.body);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) {
        headers[name] = value;
      }
    }
    const answer = await fetch(`${erpUrl}${call.path}`, {
      method: call.method,
      headers,
      body: call.method === 'GET' || call.method === 'HEAD' ? undefined : call.body,
      redirect: 'manual',
    });
    const body = Buffer.from(await answer.arrayBuffer());
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    response.end(body);
  }

  await front.start();
  return front;
}
