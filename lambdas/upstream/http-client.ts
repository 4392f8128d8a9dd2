/**
 * @module http-client
 * The one HTTP client both transports use, on undici 7. It owns the failure classes of
 * DESIGN.md section 3: whether a failure happened before the request left the proxy (the call
 * certainly did not run: -32004, retry is safe) or after (it may have run: -32003), and the
 * response size limit (-32009). It never follows redirects and never sends or keeps cookies.
 */
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import {
  ProxyError,
  ResponseTooLargeError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../errors.ts';
import { findTargetRefusal } from './target-policy.ts';

export interface UpstreamRequest {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
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

/** Errors on an already-open (reused) socket before anything was written: retry once. */
const STALE_SOCKET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
]);

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
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
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
    `The connection to ${host} broke after the request was sent (${code ?? 'network error'}). ` +
      'The call may have run on the ERP: check before retrying.',
    { cause: error },
  );
}

function deadlineError(request: UpstreamRequest, sent: boolean): ProxyError {
  const host = request.url.host;
  if (!sent) {
    return new UpstreamUnavailableError(
      `Could not connect to ${host} within ${seconds(request.timeoutMs)}. The call did not run; retrying is safe.`,
    );
  }
  return new UpstreamTimeoutError(
    `The ERP at ${host} did not answer within ${seconds(request.timeoutMs)}. ` +
      'The call may have run on the ERP: check before retrying. Raise x-request-timeout for slow calls.',
  );
}

function tooLarge(request: UpstreamRequest): ResponseTooLargeError {
  return new ResponseTooLargeError(
    `The ERP answer is larger than the proxy can return (over ${request.maxResponseBytes} bytes). ` +
      `Ask for less: use limit/offset${request.compressedResponse ? ' or fewer fields.' : ', fewer fields, or send Accept-Encoding: gzip.'}`,
  );
}

function headersToRecord(raw: Buffer[] | string[] | null): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!raw) return headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    const value = String(raw[i + 1]);
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return headers;
}

/**
 * undici 7 still calls `onRequestSent` on legacy handlers once the whole request was handed to
 * the socket (lib/core/request.js), but its types dropped it. It is the line between "did not
 * run" and "may have run".
 */
interface SendAwareHandler extends Dispatcher.DispatchHandler {
  onRequestSent?: () => void;
}

interface Attempt {
  readonly sent: boolean;
  readonly wroteNothing: boolean;
}

class UndiciHttpClient implements HttpClient {
  private agent: Agent;
  private lastActivity = 0;
  private readonly idleTimeoutMs: number;

  constructor(private readonly options: HttpClientOptions) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 4_000;
    this.agent = this.newAgent();
  }

  private newAgent(): Agent {
    return new Agent({
      connections: this.options.connectionsPerOrigin ?? 16,
      keepAliveTimeout: this.idleTimeoutMs,
      keepAliveMaxTimeout: this.idleTimeoutMs,
      // The server's own keep-alive hint is trusted minus this margin.
      keepAliveTimeoutThreshold: 1_000,
      pipelining: 1,
      connect: {
        timeout: this.options.connectTimeoutMs ?? 30_000,
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
        ...(this.options.tls?.ca ? { ca: this.options.tls.ca } : {}),
      },
    });
  }

  /**
   * After a pause longer than the idle timeout (a Lambda freeze), undici's idle timers may not
   * have fired yet; drop the whole pool rather than risk writing into a dead socket.
   */
  private freshAgentIfIdle(now: number): void {
    if (this.lastActivity !== 0 && now - this.lastActivity > this.idleTimeoutMs) {
      const old = this.agent;
      this.agent = this.newAgent();
      old.close().catch(() => undefined);
    }
    this.lastActivity = now;
  }

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    this.freshAgentIfIdle(Date.now());
    try {
      return await this.attempt(request, this.agent);
    } catch (failure) {
      const attempt = (failure as { attempt?: Attempt }).attempt;
      const cause = (failure as { error?: unknown }).error ?? failure;
      // A socket that dies before a single byte of this request was written is a stale
      // keep-alive socket: the ERP never saw the call, so one retry on a new connection is safe.
      if (
        attempt?.wroteNothing &&
        STALE_SOCKET_CODES.has(errorCode(cause) ?? '') &&
        !request.signal.aborted
      ) {
        const fresh = this.newAgent();
        try {
          return await this.attempt(request, fresh).catch((again: unknown) => {
            const a = (again as { attempt?: Attempt }).attempt;
            throw classify((again as { error?: unknown }).error ?? again, request, a?.sent ?? false);
          });
        } finally {
          fresh.close().catch(() => undefined);
        }
      }
      throw classify(cause, request, attempt?.sent ?? false);
    } finally {
      this.lastActivity = Date.now();
    }
  }

  private attempt(request: UpstreamRequest, dispatcher: Dispatcher): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      let sent = false;
      let wroteNothing = true;
      let settled = false;
      let abortRequest: ((reason?: Error) => void) | undefined;
      let status = 0;
      let headers: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let received = 0;

      const fail = (error: unknown, rawFailure = true): void => {
        if (settled) return;
        settled = true;
        request.signal.removeEventListener('abort', onDeadline);
        if (rawFailure) reject({ attempt: { sent, wroteNothing }, error });
        else reject(error);
        abortRequest?.(error instanceof Error ? error : new Error('aborted'));
      };

      const onDeadline = (): void => fail(deadlineError(request, sent), false);
      if (request.signal.aborted) {
        onDeadline();
        return;
      }
      request.signal.addEventListener('abort', onDeadline, { once: true });

      const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
      const handler: SendAwareHandler = {
        onConnect: (abort) => {
          abortRequest = abort;
          if (settled) abort(new Error('request already settled'));
        },
        onBodySent: () => {
          wroteNothing = false;
        },
        onRequestSent: () => {
          sent = true;
          wroteNothing = false;
        },
        onHeaders: (statusCode, rawHeaders) => {
          // Headers arriving proves the request went out, even if onRequestSent raced.
          sent = true;
          wroteNothing = false;
          status = statusCode;
          headers = headersToRecord(rawHeaders);
          const declared = Number(headers['content-length']);
          if (Number.isFinite(declared) && declared > request.maxResponseBytes) {
            fail(tooLarge(request), false);
            return false;
          }
          return true;
        },
        onData: (chunk) => {
          received += chunk.length;
          if (received > request.maxResponseBytes) {
            // Stop reading at once; the rest of the body is never buffered.
            fail(tooLarge(request), false);
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete: () => {
          if (settled) return;
          settled = true;
          request.signal.removeEventListener('abort', onDeadline);
          resolve({
            status,
            headers,
            body: Buffer.concat(chunks, received),
          });
        },
        onError: (error) => fail(error),
      };

      try {
        dispatcher.dispatch(
          {
            origin: request.url.origin,
            path: `${request.url.pathname}${request.url.search}`,
            method: request.method,
            headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
            body: body ?? null,
            // The deadline is enforced by this module; undici's own timers only back it up.
            headersTimeout: request.timeoutMs + 1_000,
            bodyTimeout: request.timeoutMs + 1_000,
          },
          handler,
        );
      } catch (error) {
        fail(error);
      }
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Creates the HTTP client (one per process: connections are reused across invocations). */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  return new UndiciHttpClient(options);
}
