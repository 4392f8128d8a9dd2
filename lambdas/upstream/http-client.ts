/**
 * @module upstream/http-client
 * The one HTTP client both transports use, on Node's own `node:http`/`node:https` (keep-alive
 * agents; nothing to bundle: undici's Agent alone would be 285 KB minified). It owns the failure classes of
 * the README's error table (docs/design.md, "Upstream mapping"): whether a failure happened before the request left the proxy (the call
 * certainly did not run: -32004, retry is safe) or after (it may have run: -32003), and the
 * response size limit (-32009). It never follows redirects and never sends or keeps cookies.
 */
import type { LookupAddress } from 'node:dns';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import type { AnswerLease } from '../platform/answer-budget.ts';
import { allocateWithRoom } from '../platform/buffers.ts';
import { monotonicMs } from '../platform/clock.ts';
import {
  ProxyError,
  ResponseTooLargeError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../platform/errors.ts';
import { http, https } from '../platform/node-http.ts';
import {
  createPooledAgents,
  KEEP_ALIVE_MARGIN_MS,
  KeepAlivePolicy,
  type PooledAgents,
} from './keep-alive.ts';
import { findTargetRefusal } from './target-policy.ts';

/**
 * Where the connections of one call go (core/limits-check.ts): the DNS answer for `hostname` the
 * limits counted the call by, so that no second lookup leads it elsewhere.
 *
 * - `address`: the address a limit keys, which the call counted against: every request is sent to
 *   it, over connections of its own (the agent pools them by address, and by `hostname` as the TLS
 *   server name the certificate is checked against), with `Host` as the URL names it;
 * - `addresses`: the answer, when no address of it is keyed: a new connection goes to one of them,
 *   with no second lookup, and a kept-alive one carries the call only if it is at one of them;
 * - `failure`: the name did not resolve: a new connection fails with it, as it would have.
 */
export type ConnectTo =
  | { readonly hostname: string; readonly address: LookupAddress }
  | { readonly hostname: string; readonly addresses: readonly LookupAddress[] }
  | { readonly hostname: string; readonly failure: NodeJS.ErrnoException };

export interface UpstreamRequest {
  readonly method: 'GET' | 'POST';
  /** The target: scheme, host and port (and the path, when `path` is not given). */
  readonly url: URL;
  /** The path (and query) to request on the target; without it, the URL's own. */
  readonly path?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Fires when the request's time budget is spent; bounds connect, headers and body. */
  readonly signal: AbortSignal;
  /** The budget the signal stands for, for messages. */
  readonly timeoutMs: number;
  /** Read at most this many body bytes; more is -32009. */
  readonly maxResponseBytes: number;
  /** The client asked for a compressed response (the -32009 message then does not suggest it). */
  readonly compressedResponse?: boolean;
  /** The call only reads (a version lookup): after a timeout, retrying is safe all the same. */
  readonly readOnly?: boolean;
  /** The invocation's share of the local server's memory for ERP answers; none on Lambda. */
  readonly answerLease?: AnswerLease;
  /** Where the call's connections go, when the limits resolved its ERP's name; honoured for that host only. */
  readonly connectTo?: ConnectTo;
}

export interface UpstreamResponse {
  readonly status: number;
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The port the transports depend on. */
export interface HttpClient {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** Resolves host names and applies the target policy to every resolved address. */
  readonly lookup?: LookupFunction;
  /** Open connections per origin. */
  readonly connectionsPerOrigin?: number;
  /**
   * Idle keep-alive sockets are closed after this long. Short on purpose: a Lambda frozen
   * between invocations must not wake up and write into a socket the ERP closed meanwhile.
   */
  readonly idleTimeoutMs?: number;
  /** Hard cap on a connection attempt; the request deadline usually ends it sooner. */
  readonly connectTimeoutMs?: number;
  /** TLS options for tests (e.g. a CA); production uses the system trust store. */
  readonly tls?: { readonly ca?: string | Buffer };
}

/** How a kept-alive socket fails when the ERP has closed it (a reset, a write into it, or a FIN). */
const CLOSED_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

function isTlsFailure(code: string | undefined, error: unknown): boolean {
  if (code === undefined) return error instanceof Error && /SSL|TLS|certificate/i.test(error.message);
  return (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    code.includes('CERT') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'EPROTO'
  );
}

/** What a client should do about a call that may have reached the ERP. */
function afterSending(request: UpstreamRequest): string {
  return request.readOnly
    ? 'The call only reads (a version lookup), so retrying is safe.'
    : 'The call may have run on the ERP: check before retrying.';
}

function seconds(ms: number): string {
  const s = Math.round(ms / 100) / 10;
  return `${s} s`;
}

/** Classifies a transport failure by whether the request had been written. */
function classify(error: unknown, request: UpstreamRequest, sent: boolean): ProxyError {
  if (error instanceof ProxyError) return error;
  const refusal = findTargetRefusal(error);
  if (refusal) return refusal;
  const code = errorCode(error);
  const host = request.url.host;
  if (!sent) {
    if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_FAIL' || code === 'EAI_AGAIN') {
      return new UpstreamUnavailableError(
        `Cannot resolve ERP host ${request.url.hostname} (DNS). The call did not run; retrying is safe.`,
        { cause: error },
      );
    }
    if (code === 'ECONNREFUSED') {
      return new UpstreamUnavailableError(
        `ERP at ${host} refused the connection. The call did not run; retrying is safe.`,
        { cause: error },
      );
    }
    if (isTlsFailure(code, error)) {
      return new UpstreamUnavailableError(
        `TLS handshake with ${host} failed (${code ?? 'TLS error'}). The call did not run; check the ERP's certificate.`,
        { cause: error },
      );
    }
    if (code === 'ETIMEDOUT') {
      return new UpstreamUnavailableError(
        `Connecting to ${host} timed out. The call did not run; retrying is safe.`,
        { cause: error },
      );
    }
    return new UpstreamUnavailableError(
      `Could not reach the ERP at ${host} (${code ?? 'network error'}). The call did not run; retrying is safe.`,
      { cause: error },
    );
  }
  return new UpstreamTimeoutError(
    `The connection to ${host} broke after the request was sent (${code ?? 'network error'}). ${afterSending(request)}`,
    { cause: error },
  );
}

/** How a call waited for one of the pool's connections to an ERP. */
interface PoolWait {
  readonly poolSize: number;
  /** How long it waited; still waiting when `undefined`. */
  readonly waitedMs?: number;
}

function deadlineError(
  request: UpstreamRequest,
  sent: boolean,
  connecting: boolean,
  poolWait: PoolWait | undefined,
): ProxyError {
  const host = request.url.host;
  const busy = (wait: PoolWait): string =>
    wait.poolSize === 1
      ? "the proxy's one connection to this ERP was busy with another call"
      : `the proxy's ${wait.poolSize} connections to this ERP were all busy with other calls`;
  if (poolWait?.waitedMs === undefined && poolWait) {
    return new UpstreamUnavailableError(
      `No connection to ${host} became free within ${seconds(request.timeoutMs)}: ${busy(poolWait)}. ` +
        'The call did not run; retrying is safe.',
    );
  }
  if (!sent && poolWait?.waitedMs !== undefined) {
    // Most of the budget went on waiting for the pool; name that, and what the rest was spent on.
    const left = Math.max(0, request.timeoutMs - poolWait.waitedMs);
    return new UpstreamUnavailableError(
      `The call waited ${seconds(poolWait.waitedMs)} of its ${seconds(request.timeoutMs)} for a free connection to ${host} ` +
        `(${busy(poolWait)}), then ${connecting ? 'could not connect' : 'could not send the request'} in the ${seconds(left)} left. ` +
        'The call did not run; retrying is safe.',
    );
  }
  if (!sent) {
    return new UpstreamUnavailableError(
      `Could not connect to ${host} within ${seconds(request.timeoutMs)}. The call did not run; retrying is safe.`,
    );
  }
  return new UpstreamTimeoutError(
    `The ERP at ${host} did not answer within ${seconds(request.timeoutMs)}. ${afterSending(request)} ` +
      'Raise x-request-timeout for slow calls.',
  );
}

function tooLarge(request: UpstreamRequest): ResponseTooLargeError {
  return new ResponseTooLargeError(
    `The ERP answer is larger than the proxy can return (over ${request.maxResponseBytes} bytes). ` +
      `Ask for less: use limit/offset${request.compressedResponse ? ' or fewer fields.' : ', fewer fields, or send Accept-Encoding: gzip.'}`,
  );
}

/** A size in MiB, or in bytes below 1 MiB. */
function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024 / 1024)} MiB`;
}

/** The local server's budget for answers held at once has no room for this one now. */
function noRoom(lease: AnswerLease, request: UpstreamRequest): ResponseTooLargeError {
  const others = lease.budget.heldBytes - lease.heldBytes;
  const retry = request.readOnly
    ? 'The call only reads (a version lookup), so retrying shortly is safe'
    : 'The call has run on the ERP: retry it shortly if it only reads, check first if it writes';
  return new ResponseTooLargeError(
    `The proxy is holding ${size(others)} of ERP answers for other calls, and holds at most ` +
      `${size(lease.budget.limitBytes)} at once: this answer does not fit beside them now. ` +
      `${retry}; or ask for less: use limit/offset or fewer fields.`,
  );
}

function headersToRecord(raw: IncomingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

interface Attempt {
  /** The whole request was handed to the OS ('finish'). */
  readonly sent: boolean;
  /** The socket had carried an earlier call (from the keep-alive pool, or handed over by one). */
  readonly reused: boolean;
  /** Not a byte of the request was written: the socket was found closed first. */
  readonly unwritten: boolean;
  /** Not a byte of an answer arrived on the socket. */
  readonly unanswered: boolean;
  /** The agent's name for the origin (the keep-alive policy's key). */
  readonly origin: string;
  /** How long a reused socket had been idle before this call took it. */
  readonly idleBeforeReuseMs: number;
  /** How long after taking the socket the attempt failed. */
  readonly failedAfterMs: number;
}

/** A failed attempt: the error and what was known about the request when it failed. */
class AttemptFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly attempt: Attempt,
  ) {
    super('upstream attempt failed');
  }
}

/** The code of each reason a kept-alive socket is not written into. */
const STALE_CODES = {
  closed: 'ECONNRESET',
  expired: 'ERR_KEEP_ALIVE_EXPIRED',
  elsewhere: 'ERR_KEEP_ALIVE_ELSEWHERE',
} as const;

/**
 * A kept-alive socket found closed, or idle too long, before a byte of the request was written; or
 * one connected to an address outside the call's DNS answer ({@link ConnectTo}).
 */
class StaleSocketError extends Error {
  readonly code: string;
  constructor(reason: 'closed' | 'expired' | 'elsewhere') {
    super(
      reason === 'elsewhere'
        ? "the kept-alive connection is at an address outside the call's DNS answer"
        : `the kept-alive connection was ${reason} before the request was written`,
    );
    // Closed: counted as the ERP closing it (ECONNRESET); the others: the proxy's own decision.
    this.code = STALE_CODES[reason];
  }
}

/** The request's {@link ConnectTo}, when it is for the request's own host. */
function connectToOf(request: UpstreamRequest): ConnectTo | undefined {
  const { connectTo } = request;
  return connectTo !== undefined && connectTo.hostname === request.url.hostname ? connectTo : undefined;
}

/**
 * A `lookup` that answers the call's own DNS answer (or its failure) without asking DNS again: its
 * addresses were checked by the target policy when the limits resolved them.
 */
function answeredLookup(connectTo: Exclude<ConnectTo, { readonly address: LookupAddress }>): LookupFunction {
  return (hostname, options, callback) => {
    // Asynchronously, as a resolver answers: the socket layer expects it.
    process.nextTick(() => {
      if ('failure' in connectTo) return callback(connectTo.failure, options.all ? [] : '', 0);
      const family = options.family === 4 || options.family === 6 ? options.family : undefined;
      const addresses = connectTo.addresses.filter(
        (entry) => family === undefined || entry.family === family,
      );
      const first = addresses[0];
      if (first === undefined) {
        const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        notFound.code = 'ENOTFOUND';
        return callback(notFound, options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * The request options of a call pinned to its DNS answer: to the keyed address itself (an IP host,
 * so the agent pools its connections by address and no lookup runs; `Host` and the TLS server name
 * stay the URL's, and Node checks the certificate against the server name), or, for an answer no
 * limit keys, a lookup that answers it.
 */
function pinnedOptions(
  connectTo: ConnectTo,
  url: URL,
  headers: Readonly<Record<string, string>>,
): { hostname?: string; headers?: Record<string, string>; servername?: string; lookup?: LookupFunction } {
  if (!('address' in connectTo)) return { lookup: answeredLookup(connectTo) };
  return {
    hostname: connectTo.address.address,
    headers: { ...headers, host: url.host },
    ...(url.protocol === 'https:' ? { servername: url.hostname } : {}),
  };
}

/** Whether a kept-alive `socket` may carry a call pinned to `connectTo`: it is at an address of it. */
function connectedWithin(connectTo: ConnectTo, socket: Socket): boolean {
  const remote = socket.remoteAddress;
  if ('failure' in connectTo || remote === undefined) return false;
  if ('address' in connectTo) return connectTo.address.address === remote;
  return connectTo.addresses.some((entry) => entry.address === remote);
}

/**
 * Runs `then` after the event loop has polled for I/O once more: a close from the ERP that reached
 * this machine while the proxy was busy (the handler chain runs without polling) is seen by then.
 * Two turns, because the first `setImmediate` can run before this loop iteration's poll.
 */
function afterNextPoll(then: () => void): void {
  setImmediate(() => setImmediate(then));
}

/** What one attempt needs from its client. */
interface AttemptDeps {
  readonly poolSize: number;
  readonly keepAlive: KeepAlivePolicy;
  readonly connectTimeoutMs: number;
  readonly lookup: LookupFunction | undefined;
  readonly ca: string | Buffer | undefined;
}

/** The connection the agent handed an attempt. */
interface Connection {
  readonly socket: Socket;
  /** It carried an earlier call (from the keep-alive pool, or handed over by one). */
  readonly reused: boolean;
  readonly idleBeforeReuseMs: number;
  /** What it had read before this call: more means a byte of the answer arrived. */
  readonly bytesReadBefore: number;
  readonly takenAt: number;
}

/**
 * Where one attempt stands on the wire. Every field only ever goes from unset to set, or from
 * false to true.
 */
interface Wire {
  /** The pool was full when the call was made: it waited in the agent's queue from then. */
  readonly queuedAt: number | undefined;
  connection?: Connection;
  /** A new connection is up (connect, or the TLS handshake); a reused one always is. */
  connected: boolean;
  /** The request was given to the socket (`req.end`). */
  written: boolean;
  /** The whole request was handed to the OS ('finish'). */
  flushed: boolean;
  /** The head of an answer arrived. */
  answered: boolean;
  /** The attempt resolved or failed: later events change nothing. */
  done: boolean;
}

/**
 * One attempt of a call, in the protocol's steps: open the request and wait for a connection
 * ({@link run}), take it ({@link takeConnection}), connect or check a reused one, write
 * ({@link write}), await the head ({@link readHead}), read the body ({@link readBody}); and on the
 * way, fail with what is known ({@link failure}) or at the deadline ({@link onDeadline}).
 */
class AttemptRun {
  private readonly wire: Wire;
  private readonly secure: boolean;
  private readonly origin: string;
  private readonly req: ClientRequest;
  private readonly body: Buffer | undefined;
  private resolve: (value: UpstreamResponse) => void = () => undefined;
  private reject: (error: unknown) => void = () => undefined;
  private readonly onAbort = (): void => this.onDeadline();
  /** Where the call's connections go (the limits' DNS answer), if anywhere but where the URL leads. */
  private readonly connectTo: ConnectTo | undefined;

  constructor(
    private readonly deps: AttemptDeps,
    private readonly request: UpstreamRequest,
    agents: PooledAgents,
    private readonly lease: AnswerLease | undefined,
  ) {
    this.secure = request.url.protocol === 'https:';
    this.body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
    const agent = this.secure ? agents.https : agents.http;
    this.connectTo = request.connectTo === undefined ? undefined : connectToOf(request);
    const headers = {
      ...request.headers,
      ...(this.body ? { 'content-length': String(this.body.length) } : {}),
    };
    const options = {
      protocol: request.url.protocol,
      // `URL.hostname` keeps the brackets of an IPv6 literal; the socket layer wants none.
      hostname: request.url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: request.url.port || (this.secure ? 443 : 80),
      path: request.path ?? `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers,
      agent,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
      ...(this.secure && deps.ca ? { ca: deps.ca } : {}),
      ...(this.connectTo === undefined ? {} : pinnedOptions(this.connectTo, request.url, headers)),
    };
    // Every connection to this origin busy: the call waits in the agent's queue for one.
    // (The request normalizes `hostname` into `host` before the agent names the origin.)
    this.origin = agent.getName({ ...options, host: options.hostname });
    const queued = (agent.sockets[this.origin]?.length ?? 0) >= deps.poolSize;
    this.wire = {
      queuedAt: queued ? monotonicMs() : undefined,
      connected: false,
      written: false,
      flushed: false,
      answered: false,
      done: false,
    };
    this.req = (this.secure ? https().request : http.request)(options);
  }

  /** Sends the request and settles with the answer, or with what went wrong. */
  run(): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      this.req.on('socket', (socket) => this.takeConnection(socket));
      // The whole request was handed to the OS: from here on the ERP may run the call.
      this.req.on('finish', () => {
        this.wire.flushed = true;
      });
      this.req.on('error', (error) => this.failWith(error));
      this.req.on('response', (res: IncomingMessage) => this.readHead(res));
      if (this.request.signal.aborted) {
        this.onDeadline();
        return;
      }
      this.request.signal.addEventListener('abort', this.onAbort, { once: true });
    });
  }

  /**
   * Whether the request counts as sent: flushed over an established connection, or answered. On a
   * new TLS socket 'finish' can come before the handshake ends (the TLS layer holds the bytes): a
   * handshake that then fails has sent nothing, and the call did not run.
   */
  private get sent(): boolean {
    return this.wire.answered || (this.wire.flushed && !this.connecting);
  }

  /** A new connection was handed to the attempt and is not up yet. */
  private get connecting(): boolean {
    const { connection, connected } = this.wire;
    return connection !== undefined && !connection.reused && !connected;
  }

  /** The agent handed the attempt a socket: a new one connects, a reused one is checked first. */
  private takeConnection(socket: Socket): void {
    const { keepAlive } = this.deps;
    keepAlive.assign(socket, this.origin);
    // A socket that carried an earlier call: from the pool (`reusedSocket`), or handed straight
    // from a finished call to this queued one (Node leaves the flag unset and skips the agent's
    // `reuseSocket`). A new socket has read nothing, also one whose connect already failed.
    const handedOn = !this.req.reusedSocket && socket.bytesRead > 0;
    const reused = this.req.reusedSocket || handedOn;
    if (handedOn) keepAlive.handedOn(socket);
    this.wire.connection = {
      socket,
      reused,
      idleBeforeReuseMs: reused ? keepAlive.idleBeforeReuseMs(socket) : 0,
      bytesReadBefore: socket.bytesRead,
      takenAt: monotonicMs(),
    };
    // A call pinned to its DNS answer never rides a connection to another address: a new one carries it.
    if (reused && this.connectTo !== undefined && !connectedWithin(this.connectTo, socket))
      this.abandon(new StaleSocketError('elsewhere'));
    else if (reused) this.writeWhenUsable(socket);
    else this.connectThenWrite(socket);
  }

  /**
   * Writes into a reused socket only once a close the ERP sent meanwhile would have been seen: a
   * request written into a closing connection may or may not have been read, and that cannot be
   * told.
   */
  private writeWhenUsable(socket: Socket): void {
    afterNextPoll(() => {
      if (this.wire.done) return;
      const state = this.deps.keepAlive.check(socket);
      if (state === 'usable') this.write();
      else this.abandon(new StaleSocketError(state));
    });
  }

  /** A new socket: a connection attempt has its own cap; once connected only the deadline governs. */
  private connectThenWrite(socket: Socket): void {
    const connectTimer = setTimeout(() => {
      if (this.sent) return;
      const timeout = Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' });
      this.refuse(classify(timeout, this.request, false));
    }, this.deps.connectTimeoutMs);
    const stopTimer = (): void => clearTimeout(connectTimer);
    socket.once(this.secure ? 'secureConnect' : 'connect', () => {
      stopTimer();
      this.wire.connected = true;
    });
    socket.once('close', stopTimer);
    this.write();
  }

  private write(): void {
    this.wire.written = true;
    try {
      this.req.end(this.body);
    } catch (error) {
      // A write into a socket the peer already reset can throw here, before anything was sent.
      this.abandon(error);
    }
  }

  /** The head arrived: a declared length over the limits ends the attempt before the body. */
  private readHead(res: IncomingMessage): void {
    this.wire.answered = true;
    const headers = headersToRecord(res.headers);
    this.deps.keepAlive.noteAnswer(res.socket, headers);
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.request.maxResponseBytes) {
      this.refuse(tooLarge(this.request));
      return;
    }
    const known = Number.isInteger(declared) && declared > 0;
    // A declared length is reserved whole, before a byte is held; else chunk by chunk.
    if (known && this.lease && !this.lease.reserve(declared)) {
      this.refuse(noRoom(this.lease, this.request));
      return;
    }
    this.readBody(res, headers, known ? declared : undefined);
  }

  /**
   * Reads the body, stopping at once at the limits (the rest is never buffered). With a declared
   * length the body is copied into one buffer as it arrives: no list of chunks plus a concatenated
   * copy of them (for a 5 MB answer, 5 MB less at the peak).
   */
  private readBody(
    res: IncomingMessage,
    headers: Record<string, string>,
    declared: number | undefined,
  ): void {
    const { request, lease } = this;
    const whole = declared === undefined ? undefined : allocateWithRoom(declared);
    const chunks: Buffer[] = [];
    let received = 0;
    let copied = 0;
    res.on('data', (chunk: Buffer) => {
      if (received + chunk.length > request.maxResponseBytes) {
        this.refuse(tooLarge(request));
        return;
      }
      if (declared === undefined && lease && !lease.reserve(chunk.length)) {
        this.refuse(noRoom(lease, request));
        return;
      }
      // Bytes beyond the declared length (the parser should not allow any) keep their order.
      if (whole && chunks.length === 0 && received + chunk.length <= whole.length) {
        chunk.copy(whole, received);
        copied += chunk.length;
      } else {
        chunks.push(chunk);
      }
      received += chunk.length;
    });
    res.on('end', () => {
      const head = whole?.subarray(0, copied);
      const body =
        chunks.length === 0 && head ? head : Buffer.concat(head ? [head, ...chunks] : chunks, received);
      this.settle({ value: { status: res.statusCode ?? 0, headers, body } });
    });
    res.on('error', (error) => this.failWith(error));
    res.on('aborted', () => this.failWith(new Error('response aborted')));
  }

  /** What is known about the request at the moment it failed. */
  private failure(error: unknown): AttemptFailure {
    const { connection } = this.wire;
    return new AttemptFailure(error, {
      sent: this.sent,
      reused: connection?.reused ?? false,
      unwritten: !this.wire.written,
      unanswered:
        !this.wire.answered && (connection?.socket.bytesRead ?? 0) === (connection?.bytesReadBefore ?? 0),
      origin: this.origin,
      idleBeforeReuseMs: connection?.idleBeforeReuseMs ?? 0,
      failedAfterMs: connection === undefined ? 0 : monotonicMs() - connection.takenAt,
    });
  }

  /** The request's time budget is spent: the error says where the call stood. */
  private onDeadline(): void {
    const { queuedAt, connection } = this.wire;
    const poolWait =
      queuedAt === undefined
        ? undefined
        : {
            poolSize: this.deps.poolSize,
            ...(connection ? { waitedMs: connection.takenAt - queuedAt } : {}),
          };
    this.refuse(deadlineError(this.request, this.sent, this.connecting, poolWait));
  }

  /** A socket or response error: the send step classifies it (and may retry). */
  private failWith(error: unknown): void {
    if (!this.wire.done) this.settle({ error: this.failure(error) });
  }

  /** Gives up on the socket for `error`, before or while writing. */
  private abandon(error: unknown): void {
    this.settle({ error: this.failure(error) });
    this.req.destroy();
  }

  /** Ends the attempt with a classified error of the proxy's own. */
  private refuse(error: ProxyError): void {
    this.settle({ error });
    this.req.destroy();
  }

  private settle(outcome: { value: UpstreamResponse } | { error: unknown }): void {
    if (this.wire.done) return;
    this.wire.done = true;
    this.request.signal.removeEventListener('abort', this.onAbort);
    if ('value' in outcome) this.resolve(outcome.value);
    else this.reject(outcome.error);
  }
}

class NodeHttpClient implements HttpClient {
  private readonly agents: PooledAgents;
  private readonly idleTimeoutMs: number;
  private readonly keepAlive: KeepAlivePolicy;

  constructor(private readonly options: HttpClientOptions) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 4_000;
    this.keepAlive = new KeepAlivePolicy({ idleTimeoutMs: this.idleTimeoutMs });
    this.agents = this.newAgents();
  }

  private get poolSize(): number {
    return this.options.connectionsPerOrigin ?? 16;
  }

  private newAgents(): PooledAgents {
    const pool = {
      keepAlive: true,
      maxSockets: this.poolSize,
      maxFreeSockets: this.poolSize,
      // Free sockets time out (and are destroyed by the agent) after this long idle; the
      // keep-alive policy shortens it for ERPs that close sooner.
      timeout: this.idleTimeoutMs,
      // Reuse the most recently used socket: the one least likely to have been closed.
      scheduling: 'lifo' as const,
    };
    return createPooledAgents(pool, this.keepAlive, this.options.tls);
  }

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    // The invocation's share of the local server's memory for answers (none on Lambda).
    const lease = request.answerLease;
    try {
      return await this.attempt(request, this.agents, lease);
    } catch (failure) {
      if (!(failure instanceof AttemptFailure)) throw failure;
      if (!this.retryable(failure, request)) throw classify(failure.error, request, failure.attempt.sent);
      // One retry, on a connection of its own (never a pooled one).
      const fresh = this.newAgents();
      try {
        return await this.attempt(request, fresh, lease).catch((again: unknown) => {
          throw again instanceof AttemptFailure ? classify(again.error, request, again.attempt.sent) : again;
        });
      } finally {
        fresh.destroy();
      }
    }
  }

  /**
   * Whether a failed call certainly did not reach the ERP (or only reads), so that one retry on a
   * new connection is safe. Only a socket that carried an earlier call qualifies: the ERP closing
   * an idle kept-alive connection is the one failure that says nothing about this call.
   */
  private retryable(failure: AttemptFailure, request: UpstreamRequest): boolean {
    const { attempt, error } = failure;
    if (!attempt.reused || request.signal.aborted) return false;
    const closedByErp = attempt.unanswered && CLOSED_SOCKET_CODES.has(errorCode(error) ?? '');
    // The ERP closed it while it sat idle, or just as this call took it: remember how soon this
    // ERP closes idle connections, so its sockets are not kept that long again. (A close long
    // after the call took the socket is about the call, not about idle connections.) Also when
    // the request had been written: an ERP that closes idle connections just as a request
    // arrives fails that call (-32003), and must not fail the next ones; the cost of a wrong
    // lesson (a worker that died on the call) is new connections for a while, not failed calls.
    if (closedByErp && attempt.failedAfterMs < KEEP_ALIVE_MARGIN_MS)
      this.keepAlive.learnIdleClose(attempt.origin, attempt.idleBeforeReuseMs);
    // Found closed before a byte was written, or the kernel refused the very write: the request
    // never left. (A request split over several writes that fails part-way is incomplete, and an
    // HTTP server does not run an incomplete request.)
    if (attempt.unwritten) return true;
    const writeFailed = (error as { syscall?: unknown } | null)?.syscall === 'write';
    if (!attempt.sent && closedByErp && writeFailed) return true;
    // Written, then the connection closed without a byte of answer: the ERP may have read the
    // request before closing (RFC 9110, 9.2.2). Retried only when the call only reads.
    return closedByErp && request.readOnly === true;
  }

  private attempt(
    request: UpstreamRequest,
    agents: PooledAgents,
    lease: AnswerLease | undefined,
  ): Promise<UpstreamResponse> {
    return new AttemptRun(
      {
        poolSize: this.poolSize,
        keepAlive: this.keepAlive,
        connectTimeoutMs: this.options.connectTimeoutMs ?? 30_000,
        lookup: this.options.lookup,
        ca: this.options.tls?.ca,
      },
      request,
      agents,
      lease,
    ).run();
  }

  async close(): Promise<void> {
    this.agents.destroy();
  }
}

/** Creates the HTTP client (one per process: connections are reused across invocations). */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  return new NodeHttpClient(options);
}
