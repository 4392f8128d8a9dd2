/**
 * Upstreams on 127.0.0.1 that answer at once with fixed bytes: the small ERP answers (handler
 * overhead, cold start, the fast end-to-end upstream) and the large `search_read` answers.
 * They read the whole request body first, as a real server does, and keep connections alive.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loopbackCert } from '../test/support/tls-cert.ts';

export interface FixedAnswer {
  readonly status: number;
  readonly body: Buffer;
}

export interface RunningServer {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

export async function listen(server: Server, protocol: 'http' | 'https' = 'http'): Promise<RunningServer> {
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${protocol}://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A server that reads each request and answers `answer(method, path)` immediately. */
export function fixedAnswerServer(answer: (method: string, path: string) => FixedAnswer): Server {
  return createServer(fixedAnswerHandler(answer));
}

/** The request handler of {@link fixedAnswerServer}. */
function fixedAnswerHandler(
  answer: (method: string, path: string) => FixedAnswer,
): (req: IncomingMessage, res: ServerResponse) => void {
  const headersOf = (length: number) => ({
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(length),
  });
  return (req: IncomingMessage, res: ServerResponse) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      const { status, body } = answer(req.method ?? 'GET', req.url ?? '/');
      res.writeHead(status, headersOf(body.length));
      res.end(body);
    });
  };
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/** Small answers, as Odoo 19 gives them for `search_count` and `/web/version`. */
export const SMALL_ANSWERS = {
  jsonrpc: json({ jsonrpc: '2.0', id: 1, result: 42 }),
  json2: json(42),
  version: json({ version_info: [19, 0, 0, 'final', 0, ''], version: '19.0' }),
  notFound: json({ error: 'not found' }),
} as const;

export function smallAnswer(_method: string, path: string): FixedAnswer {
  if (path.endsWith('/jsonrpc')) return { status: 200, body: SMALL_ANSWERS.jsonrpc };
  if (path.includes('/json/2/')) return { status: 200, body: SMALL_ANSWERS.json2 };
  if (path.endsWith('/web/version')) return { status: 200, body: SMALL_ANSWERS.version };
  return { status: 404, body: SMALL_ANSWERS.notFound };
}

/**
 * The tiny fixed-answer upstream over HTTPS, with a certificate for 127.0.0.1 written into `dir`
 * (test/support/tls-cert.ts; a process trusts it through `NODE_EXTRA_CA_CERTS`, its `certFile`): deployed ERPs
 * are reached over HTTPS, whose module and handshake a first call pays.
 */
export function startSmallTlsUpstream(dir: string): Promise<RunningServer & { readonly certFile: string }> {
  const { cert, key, certFile } = loopbackCert(dir);
  const server = createTlsServer({ key, cert }, fixedAnswerHandler(smallAnswer));
  // An https.Server is an http.Server for everything `listen` uses.
  return listen(server as unknown as Server, 'https').then((running) => ({ ...running, certFile }));
}

/** The tiny fixed-answer upstream (answers at once, any path prefix). */
export function startSmallUpstream(): Promise<RunningServer> {
  return listen(fixedAnswerServer(smallAnswer));
}

/** Partner records, like `search_read` with a few common fields, until the JSON reaches `bytes`. */
export function partnerRecords(bytes: number): unknown[] {
  const cities = ['Brussels', 'Liège', 'Gent', 'Namur', 'Antwerpen', 'Mons', 'Leuven', 'Bruges'];
  const records: unknown[] = [];
  let size = 2;
  for (let id = 1; size < bytes; id++) {
    const record = {
      id,
      name: `Partner ${id} SA`,
      display_name: `Partner ${id} SA, Contact ${id % 97}`,
      email: `contact${id}@partner-${id % 311}.example.com`,
      phone: `+32 2 ${String(100000 + ((id * 7919) % 900000)).replace(/(\d{3})(\d{3})/, '$1 $2')}`,
      street: `Rue de l'Exemple ${id % 250}`,
      city: cities[id % cities.length],
      zip: String(1000 + (id % 8999)),
      country_id: [20, 'Belgium'],
      active: id % 13 !== 0,
      write_date: '2026-01-15 10:42:07',
    };
    records.push(record);
    size += Buffer.byteLength(JSON.stringify(record)) + 1;
  }
  return records;
}

export const LARGE_SIZES = { '1mb': 1024 * 1024, '5mb': 5 * 1024 * 1024 } as const;
export type LargeSize = keyof typeof LARGE_SIZES;

/**
 * The large `search_read` answers: `/<size>/jsonrpc` answers a JSON-RPC envelope whose `result`
 * is the records (v1), `/<size>/json/2/...` the bare array (v2). Returns the byte sizes too.
 */
export async function startLargeUpstream(): Promise<
  RunningServer & { sizes: Record<string, { v1: number; v2: number }> }
> {
  const bodies = new Map<string, { v1: Buffer; v2: Buffer }>();
  const sizes: Record<string, { v1: number; v2: number }> = {};
  // `16kb` warms the handlers up (modules, compression) without raising the memory baseline.
  for (const [name, bytes] of Object.entries({ '16kb': 16 * 1024, ...LARGE_SIZES })) {
    const records = partnerRecords(bytes);
    const v2 = json(records);
    const v1 = json({ jsonrpc: '2.0', id: 1, result: records });
    bodies.set(name, { v1, v2 });
    sizes[name] = { v1: v1.length, v2: v2.length };
  }
  const server = fixedAnswerServer((method, path) => {
    const name = path.split('/')[1] ?? '';
    const pair = bodies.get(name);
    if (!pair) return smallAnswer(method, path);
    if (path.endsWith('/jsonrpc')) return { status: 200, body: pair.v1 };
    if (path.includes('/json/2/')) return { status: 200, body: pair.v2 };
    return smallAnswer(method, path);
  });
  return { ...(await listen(server)), sizes };
}
