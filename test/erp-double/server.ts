/**
 * @module erp-double/server
 * The HTTP server of the ERP double (`node:http`, loopback only) and its router.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Database } from './database.ts';
import { handleDocBearer } from './doc-bearer.ts';
import { handleJson2 } from './json2.ts';
import { handleJsonRpc, type JsonRpcRoute } from './jsonrpc.ts';
import {
  badRequestPage,
  type DoubleResponse,
  jsonResponse,
  notFoundPage,
  redirect,
  werkzeugNotFound,
} from './responses.ts';
import { type DoubleState, seedDatabases, selectDatabase } from './state.ts';
import type { ErpDouble, ErpDoubleOptions, RecordedRequest } from './types.ts';
import { DOUBLE_USERS } from './users.ts';
import { hasJsonRpc, isModern, platformOf, releaseOf } from './versions.ts';

const JSON_RPC_ROUTES: ReadonlySet<string> = new Set([
  '/jsonrpc',
  '/web/webclient/version_info',
  '/web/database/list',
]);

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Routes one fully read request. */
export function route(state: DoubleState, request: IncomingMessage, body: string): DoubleResponse {
  const method = request.method ?? 'GET';
  const path = new URL(request.url ?? '/', 'http://erp-double').pathname;
  const modern = isModern(state.mode);
  const host = header(request, 'host');

  if (JSON_RPC_ROUTES.has(path) && hasJsonRpc(state.mode) && !state.jsonRpcRemoved) {
    return handleJsonRpc(state, path as JsonRpcRoute, {
      contentType: header(request, 'content-type'),
      host,
      body,
    });
  }
  if (modern && (path === '/web/version' || path === '/json/version')) {
    if (method !== 'GET' && method !== 'HEAD') return redirect('/web/database/selector');
    const release = releaseOf(state.mode);
    return jsonResponse(200, { version_info: [...release.versionInfo], version: release.version });
  }
  if (Number(state.mode) >= 18 && (path === '/odoo' || path.startsWith('/odoo/'))) {
    return webClient(state, method, path, selectDatabase(state, header(request, 'x-odoo-database'), host));
  }
  const db = modern ? selectDatabase(state, header(request, 'x-odoo-database'), host) : undefined;
  // api_doc (19+): routes of the per-database routing map only, like JSON-2; 16-18 have no such route.
  if (modern && path.startsWith('/doc-bearer/')) {
    if (!db) return notFoundPage(state.mode, true);
    return handleDocBearer(state, db, {
      method,
      path,
      contentType: header(request, 'content-type'),
      authorization: header(request, 'authorization'),
      ifNoneMatch: header(request, 'if-none-match'),
      ifMatch: header(request, 'if-match'),
      ifModifiedSince: header(request, 'if-modified-since'),
      cacheControl: header(request, 'cache-control'),
      body,
    });
  }
  if (path === '/json/2' || path.startsWith('/json/2/')) {
    if (!modern) return werkzeugNotFound(state.mode);
    // Without a database the JSON-2 routes are not in the routing map at all (Odoo 19's `odoo/http.py`; captures `v2-no-db-*`).
    if (!db) return notFoundPage(state.mode, true);
    return handleJson2(state, db, {
      method,
      path,
      contentType: header(request, 'content-type'),
      authorization: header(request, 'authorization'),
      body,
    });
  }
  return notFoundPage(state.mode, modern && !db);
}

/**
 * The web client's pages, `/odoo` and `/odoo/<path>` (Odoo 18 and later: the address bar shows
 * them, and people paste them as the ERP's URL). Odoo serves them without a database
 * (`web_client`, `auth="none"`), then `ensure_db()`: with several databases and none selected, a
 * 303 to the database selector; with one, a 303 to the login page (no session here). A POST is
 * an `http` route's CSRF check: without a database a 303 to the selector, with one an HTML 400
 * (`HttpDispatcher.dispatch`, Odoo 19's `odoo/http.py`).
 */
function webClient(
  state: DoubleState,
  method: string,
  path: string,
  db: Database | undefined,
): DoubleResponse {
  if (db === undefined) return redirect('/web/database/selector');
  if (method === 'GET' || method === 'HEAD')
    return redirect(`/web/login?redirect=${encodeURIComponent(path)}`);
  return badRequestPage(state.mode, 'Session expired (invalid CSRF token)');
}

/**
 * Starts an Odoo imitation on `127.0.0.1` (random port).
 *
 * @example
 * ```ts
 * const erp = await startErpDouble({ mode: '18' });
 * const response = await fetch(`${erp.url}/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ jsonrpc: '2.0', method: 'call', params: { service: 'common', method: 'version', args: [] }, id: 1 }) });
 * await erp.close();
 * ```
 */
export async function startErpDouble(options: ErpDoubleOptions = {}): Promise<ErpDouble> {
  const mode = options.mode ?? '19';
  const databaseNames = options.databases ?? ['erp_a', 'erp_b'];
  const users = options.users ?? DOUBLE_USERS;
  const state: DoubleState = {
    mode,
    databases: seedDatabases(databaseNames, users),
    users,
    dbfilter: options.dbfilter,
    jsonRpcRemoved: options.jsonRpc === false,
    ...(options.binaries === undefined ? {} : { binaries: options.binaries }),
  };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let delayMs = options.delayMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // In flight from the request's arrival until its answer is written (or its connection closes).
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let counted = true;
    const done = (): void => {
      if (!counted) return;
      counted = false;
      inFlight -= 1;
    };
    response.on('finish', done);
    response.on('close', done);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (options.recordRequests !== false)
        requests.push({
          method: request.method ?? 'GET',
          path: request.url ?? '/',
          headers: { ...request.headers },
          body,
          receivedAt: Date.now(),
        });
      if (delayMs > 0) setTimeout(() => respond(body), delayMs);
      else respond(body);
    });
    const respond = (body: string): void => {
      if (response.destroyed) return;
      let answer: DoubleResponse;
      try {
        answer = route(state, request, body);
      } catch (error) {
        answer = {
          status: 500,
          headers: { 'Content-Type': 'text/plain' },
          body: `erp-double bug: ${String(error)}`,
        };
      }
      const payload = Buffer.from(answer.body, 'utf8');
      // A 304 carries no entity headers, Content-Length included (werkzeug strips them).
      const length = answer.status === 304 ? {} : { 'Content-Length': String(payload.length) };
      // The imitated server's werkzeug and Python (captures: 16's Werkzeug 1.0.1 on Python 3.9).
      const serverHeader = 'Server' in answer.headers ? { Server: platformOf(mode).serverHeader } : {};
      response.writeHead(answer.status, { ...answer.headers, ...serverHeader, ...length });
      response.end(payload);
    };
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    mode,
    requests,
    get inFlight(): number {
      return inFlight;
    },
    get maxInFlight(): number {
      return maxInFlight;
    },
    setDelay(ms: number): void {
      delayMs = ms;
    },
    reset(): void {
      state.databases = seedDatabases(databaseNames, users);
      requests.length = 0;
      maxInFlight = inFlight;
    },
    close(): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      });
    },
  };
}
