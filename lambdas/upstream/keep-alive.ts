/**
 * @module upstream/keep-alive
 * When a kept-alive connection to an ERP may carry another call (README, "Limits"; docs/design.md,
 * "Upstream mapping"). An ERP, or the nginx in front of it, may close an idle connection at any
 * time, without `Connection: close`. A request written into a connection the ERP is closing is
 * lost, and the proxy cannot tell whether the ERP read it (-32003). So the pool reuses a socket only
 * while the ERP can be expected to still listen on it:
 *
 * - never once the ERP has ended it: the HTTP client checks again after one more poll of the event
 *   loop, so a close that reached this machine while the proxy was busy is seen before writing;
 * - never past the `Keep-Alive: timeout=N` the ERP announced, less a margin;
 * - never past the idle time after which this ERP was seen closing connections, less the same
 *   margin (remembered per origin for a while): an ERP that closes connections a few milliseconds
 *   after answering gets a new connection for every call;
 * - never an answer with `Connection: close` (Node's agent does not keep those).
 *
 * Node's agent has no hook to refuse a free socket when it hands one out, so the two methods it
 * documents for overriding, `keepSocketAlive` (a socket becomes free) and `reuseSocket` (a free
 * socket is handed out), feed this policy; the HTTP client checks `usable` before writing.
 */
import type { ClientRequest, Agent as HttpAgent, AgentOptions as HttpAgentOptions } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { http, https } from '../platform/node-http.ts';

/**
 * A socket is not reused within this of the ERP's announced or observed keep-alive end: the two
 * clocks differ, and a close takes time to arrive. Node's agent uses the same second for the hint.
 */
export const KEEP_ALIVE_MARGIN_MS = 1_000;
/** How long an ERP's observed idle close is remembered (an ERP's configuration can change). */
export const IDLE_CLOSE_MEMORY_MS = 10 * 60_000;
/** Origins remembered at most; the oldest observation goes first. */
const MAX_REMEMBERED_ORIGINS = 1_000;

/**
 * The idle timeout an ERP announces in `Keep-Alive` (`timeout=5`, `timeout=5, max=100`,
 * `max=100, timeout=5`), in milliseconds; `undefined` without a usable one.
 */
export function keepAliveTimeoutMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = /(?:^|[,;\s])timeout\s*=\s*"?(\d{1,9})"?(?:$|[,;\s])/i.exec(header)?.[1];
  return seconds === undefined ? undefined : Number(seconds) * 1000;
}

interface SocketState {
  /** The agent's name for the socket's origin. */
  origin: string;
  /** The idle timeout the last answer on this socket announced. */
  announcedMs?: number;
  /** When the socket went back into the pool (wall clock: a frozen Lambda's timers lag). */
  freeSince?: number;
  /** How long it may stay idle from then on. */
  maxIdleMs?: number;
  /** How long it was idle before its current call took it. */
  idleBeforeReuseMs: number;
  /** Learns from the ERP ending the socket while it sits in the pool. */
  onIdleClose?: () => void;
}

interface Observation {
  readonly idleMs: number;
  readonly at: number;
}

export interface KeepAlivePolicyOptions {
  /** The proxy's own idle limit. */
  readonly idleTimeoutMs: number;
  readonly now?: () => number;
}

/** What the proxy knows about its kept-alive sockets and about how each ERP closes them. */
export class KeepAlivePolicy {
  private readonly sockets = new WeakMap<Duplex, SocketState>();
  private readonly idleCloses = new Map<string, Observation>();
  private readonly now: () => number;

  constructor(private readonly options: KeepAlivePolicyOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A request of `origin` was handed `socket`. */
  assign(socket: Duplex, origin: string): void {
    const state = this.sockets.get(socket);
    if (state) state.origin = origin;
    else this.sockets.set(socket, { origin, idleBeforeReuseMs: 0 });
  }

  /** The answer on `socket` carried these (lower-cased) headers. */
  noteAnswer(socket: Duplex | null | undefined, headers: Readonly<Record<string, string>>): void {
    const state = socket ? this.sockets.get(socket) : undefined;
    if (state) state.announcedMs = keepAliveTimeoutMs(headers['keep-alive']);
  }

  /** How long a socket of `origin` that announced `announcedMs` may stay idle (0: not at all). */
  maxIdleMs(origin: string, announcedMs?: number): number {
    let limit = this.options.idleTimeoutMs;
    if (announcedMs !== undefined) limit = Math.min(limit, announcedMs - KEEP_ALIVE_MARGIN_MS);
    const seen = this.observedIdleCloseMs(origin);
    if (seen !== undefined) limit = Math.min(limit, seen - KEEP_ALIVE_MARGIN_MS);
    return Math.max(0, limit);
  }

  /** The shortest idle time after which `origin` was seen closing a connection, if recent. */
  observedIdleCloseMs(origin: string): number | undefined {
    const seen = this.idleCloses.get(origin);
    if (seen === undefined) return undefined;
    if (this.now() - seen.at > IDLE_CLOSE_MEMORY_MS) {
      this.idleCloses.delete(origin);
      return undefined;
    }
    return seen.idleMs;
  }

  /** `origin` closed a connection that had been idle for `idleMs`. */
  learnIdleClose(origin: string, idleMs: number): void {
    const known = this.observedIdleCloseMs(origin);
    this.idleCloses.delete(origin);
    this.idleCloses.set(origin, { idleMs: Math.min(idleMs, known ?? idleMs), at: this.now() });
    if (this.idleCloses.size > MAX_REMEMBERED_ORIGINS) {
      const oldest = this.idleCloses.keys().next().value;
      if (oldest !== undefined) this.idleCloses.delete(oldest);
    }
  }

  /**
   * `socket` becomes free (the agent's `keepSocketAlive`): whether the pool may keep it.
   * `agentKeeps` is Node's own decision (it also sets the socket's idle timer).
   */
  keep(socket: Duplex, agentKeeps: () => boolean): boolean {
    const state = this.sockets.get(socket);
    if (!state) return agentKeeps();
    if (!isOpen(socket)) return false;
    const maxIdleMs = this.maxIdleMs(state.origin, state.announcedMs);
    if (maxIdleMs <= 0 || !agentKeeps()) return false;
    // The agent destroys a free socket when this timer fires.
    (socket as Socket).setTimeout(maxIdleMs);
    const freeSince = this.now();
    state.freeSince = freeSince;
    state.maxIdleMs = maxIdleMs;
    const onIdleClose = (): void => {
      if (state.freeSince === freeSince) this.learnIdleClose(state.origin, this.now() - freeSince);
      state.onIdleClose = undefined;
    };
    state.onIdleClose = onIdleClose;
    socket.once('end', onIdleClose);
    socket.once('error', onIdleClose);
    return true;
  }

  /** A free `socket` is handed to a request (the agent's `reuseSocket`). */
  reuse(socket: Duplex): void {
    const state = this.sockets.get(socket);
    if (!state) return;
    if (state.onIdleClose) {
      socket.removeListener('end', state.onIdleClose);
      socket.removeListener('error', state.onIdleClose);
      state.onIdleClose = undefined;
    }
    state.idleBeforeReuseMs = state.freeSince === undefined ? 0 : this.now() - state.freeSince;
    state.freeSince = undefined;
  }

  /**
   * A socket went from a finished call straight to a queued one, without entering the pool (Node's
   * agent does that without `keepSocketAlive` or `reuseSocket`): it was not idle, and it may carry
   * the call only if the pool could have kept it ({@link check} says `expired` otherwise).
   */
  handedOn(socket: Duplex): void {
    const state = this.sockets.get(socket);
    if (!state) return;
    state.freeSince = undefined;
    state.idleBeforeReuseMs = 0;
    state.maxIdleMs = this.maxIdleMs(state.origin, state.announcedMs);
  }

  /** How long `socket` had been idle before its current request took it. */
  idleBeforeReuseMs(socket: Duplex): number {
    return this.sockets.get(socket)?.idleBeforeReuseMs ?? 0;
  }

  /**
   * Whether a request may be written into `socket`, a socket that carried an earlier call:
   * `closed` once either side began closing it, `expired` when it was idle for longer than it may
   * be (a Lambda thawed after a freeze finds its idle timers not yet run).
   */
  check(socket: Duplex): 'usable' | 'closed' | 'expired' {
    if (!isOpen(socket)) return 'closed';
    const state = this.sockets.get(socket);
    if (state?.maxIdleMs === undefined) return 'usable';
    // 0: the ERP's announced or observed keep-alive leaves no time to reuse it at all.
    if (state.maxIdleMs <= 0 || state.idleBeforeReuseMs > state.maxIdleMs) return 'expired';
    return 'usable';
  }
}

/** Neither side has begun closing the socket. */
function isOpen(socket: Duplex): boolean {
  return !socket.destroyed && socket.writable && socket.readable && !socket.readableEnded;
}

/** `keepSocketAlive` returns whether the agent keeps the socket; @types/node declares `void`. */
function agentKeeps(result: unknown): boolean {
  return result !== false;
}

/**
 * `agent` (HTTP or HTTPS: the HTTPS agent is an HTTP agent) with `policy` deciding which free
 * sockets it keeps and reuses, through the two methods Node's agent calls on itself.
 */
function underPolicy<A extends HttpAgent>(agent: A, policy: KeepAlivePolicy): A {
  const keepSocketAlive = agent.keepSocketAlive.bind(agent);
  const reuseSocket = agent.reuseSocket.bind(agent);
  agent.keepSocketAlive = (socket: Duplex): boolean =>
    policy.keep(socket, () => agentKeeps(keepSocketAlive(socket)));
  agent.reuseSocket = (socket: Duplex, request: ClientRequest): void => {
    policy.reuse(socket);
    reuseSocket(socket, request);
  };
  return agent;
}

export interface PooledAgents {
  readonly http: HttpAgent;
  /** Made on its first use (an HTTPS request): `node:https` is loaded then. */
  readonly https: HttpsAgent;
  /** Destroys both agents, the HTTPS one only if it was made (so `node:https` is never loaded for it). */
  destroy(): void;
}

/** The keep-alive agents of one HTTP client, both under `policy`; `ca` is for HTTPS only. */
export function createPooledAgents(
  pool: HttpAgentOptions,
  policy: KeepAlivePolicy,
  tls: { readonly ca?: string | Buffer } = {},
): PooledAgents {
  let httpsAgent: HttpsAgent | undefined;
  const httpAgent = underPolicy(new http.Agent(pool), policy);
  return {
    http: httpAgent,
    // Made on the first HTTPS request (node:https is loaded then: platform/node-http.ts).
    get https() {
      httpsAgent ??= underPolicy(new (https().Agent)({ ...pool, ...(tls.ca ? { ca: tls.ca } : {}) }), policy);
      return httpsAgent;
    },
    destroy() {
      httpAgent.destroy();
      httpsAgent?.destroy();
    },
  };
}
