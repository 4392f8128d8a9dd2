/**
 * @module upstream/transport-routing
 * Which ERP protocol serves a v1 or a v2 call (`ERP_V1_TRANSPORT`, `ERP_V2_TRANSPORT`; README,
 * "One envelope for every ERP version"). A call moves to the other protocol only after an
 * answer that proves it did not run (a 404 for the missing endpoint, never a timeout), so no
 * call can run twice, and only to a protocol the target is known to have: a v1 call goes to
 * JSON-2 after a 404 from `/jsonrpc` only when the target's version answer says ERP 19 or later.
 * An answer that is not an ERP's (`erp-answer.ts`) moves nothing and is remembered nowhere; from
 * a URL with a path, its -32005 names the address without the path (`path-hint.ts`), and so does
 * a v2 call to a URL with a path whose `/json/2` is missing and whose version lookup is not an
 * ERP's answer either (Odoo 16 and 17 answer `/odoo/...` with an HTML 404: no -32006 there).
 */

import {
  BadUpstreamResponseError,
  Json2UnavailableError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../platform/errors.ts';
import type { V1TransportMode, V2TransportMode } from '../platform/names.ts';
import { JsonRpcMissingError, notAnErpWithoutVersion } from './erp-answer.ts';
import type { CallContext, ErpCall, ErpOutcome, ErpTransport } from './erp-transport.ts';
import type { Json2Transport } from './json2-transport.ts';
import type { JsonRpcTransport } from './jsonrpc-transport.ts';
import type { MethodDocs } from './method-docs.ts';
import { hasPath, withPathHint } from './path-hint.ts';
import { V1OverJson2 } from './v1-over-json2.ts';
import { V2OverJsonRpc } from './v2-over-jsonrpc.ts';
import { majorVersion, type VersionClient } from './version-client.ts';

/** ERP 19 brought JSON-2; ERP 22 removes `/jsonrpc`. */
const FIRST_JSON2_MAJOR = 19;
const FIRST_WITHOUT_JSONRPC_MAJOR = 22;
/**
 * How long a target of ERP 19-21 whose `/jsonrpc` answered 404 (and whose JSON-2 then served a
 * call) is served over JSON-2 without asking again.
 */
const JSONRPC_GONE_TTL_MS = 5 * 60 * 1000;
const JSONRPC_GONE_MAX_ENTRIES = 500;

/** What routes a v2 call (and the version lookups on the way). */
export interface RoutingDeps {
  readonly jsonrpc: JsonRpcTransport;
  readonly json2: Json2Transport;
  readonly versions: VersionClient;
}

/** A v1 call translated to JSON-2 also reads the ERP's method documentation (`call_method`). */
export interface V1RoutingDeps extends RoutingDeps {
  readonly docs: MethodDocs;
}

function targetKey(call: ErpCall): string {
  return call.baseUrl.href.replace(/\/+$/, '');
}

/**
 * The target's major version, asked for (or cached) on the way to a call. The lookup only reads,
 * so a lookup that timed out is reported as a call that did not run; a target whose answer is
 * not an ERP's gives that -32005 back (not thrown); one that tells no readable major, `undefined`.
 */
async function lookUp(
  deps: RoutingDeps,
  call: ErpCall,
  context: CallContext,
): Promise<number | undefined | BadUpstreamResponseError> {
  try {
    return majorVersion(await deps.versions.version(call.baseUrl, { ...context, readOnly: true }, call.db));
  } catch (error) {
    if (error instanceof UpstreamTimeoutError) {
      throw new UpstreamUnavailableError(
        'The ERP did not tell its version in time (the proxy asks it to choose the protocol). The call did not run; retry later.',
        { cause: error },
      );
    }
    if (error instanceof BadUpstreamResponseError) return error;
    throw error;
  }
}

/** {@link lookUp}, a target that does not tell its version being `undefined`. */
async function lookUpMajor(
  deps: RoutingDeps,
  call: ErpCall,
  context: CallContext,
): Promise<number | undefined> {
  const known = await lookUp(deps, call, context);
  return known instanceof BadUpstreamResponseError ? undefined : known;
}

function cachedMajor(deps: RoutingDeps, call: ErpCall): number | undefined {
  const version = deps.versions.cached(call.baseUrl);
  return version ? majorVersion(version) : undefined;
}

/** v1 calls: over `/jsonrpc`, or translated to JSON-2, by `ERP_V1_TRANSPORT`. */
export class V1Router implements ErpTransport {
  private readonly overJson2: V1OverJson2;
  private readonly jsonRpcGone = new Map<string, number>();

  constructor(
    private readonly mode: V1TransportMode,
    private readonly deps: V1RoutingDeps,
  ) {
    this.overJson2 = new V1OverJson2(deps.json2, deps.docs);
  }

  knownVersion(baseUrl: URL): string | undefined {
    return this.deps.versions.cached(baseUrl)?.version;
  }

  async call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    try {
      return await this.route(call, context);
    } catch (error) {
      throw withPathHint(error, call.baseUrl);
    }
  }

  private async route(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    if (this.mode === 'jsonrpc') return this.deps.jsonrpc.call(call, context);
    if (this.mode === 'json2') {
      const major = await lookUpMajor(this.deps, call, context);
      if (major === undefined) return this.jsonRpcOfUnknown(call, context);
      if (major < FIRST_JSON2_MAJOR) return this.deps.jsonrpc.call(call, context);
      return this.json2OrBack(call, context, major, major < FIRST_WITHOUT_JSONRPC_MAJOR);
    }
    const major = cachedMajor(this.deps, call);
    if ((major !== undefined && major >= FIRST_WITHOUT_JSONRPC_MAJOR) || this.knownGone(call)) {
      // JSON-2 takes the signatures of the target's version (cached with the routing entry).
      return this.json2OrBack(call, context, major ?? (await lookUpMajor(this.deps, call, context)), false);
    }
    try {
      return await this.deps.jsonrpc.call(call, context);
    } catch (error) {
      if (!(error instanceof JsonRpcMissingError)) throw error;
      // The 404 says the call did not run, but not that the target is an ERP: another service at
      // that URL answers 404 too. Only the target's own version answer (ERP 19 or later, which has
      // JSON-2) moves the call there.
      const known = await lookUpMajor(this.deps, call, context);
      if (known === undefined) throw notAnErpWithoutVersion(error);
      if (known < FIRST_JSON2_MAJOR) throw error;
      let outcome: ErpOutcome;
      try {
        outcome = await this.overJson2.call(call, context, known);
      } catch (json2Error) {
        // No JSON-2 route after all: say what /jsonrpc said.
        if (json2Error instanceof Json2UnavailableError && json2Error.reason === 'no_json2') throw error;
        throw this.asV1Error(json2Error);
      }
      // 22+ is served over JSON-2 from the cached version; 19-21 without /jsonrpc from this.
      if (known < FIRST_WITHOUT_JSONRPC_MAJOR) this.rememberGone(call);
      return outcome;
    }
  }

  /**
   * Over `/jsonrpc` to a target that told no version: its 404 there is not ERP 22's (which tells
   * its version), so the message does not suggest v2.
   */
  private async jsonRpcOfUnknown(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    try {
      return await this.deps.jsonrpc.call(call, context);
    } catch (error) {
      throw error instanceof JsonRpcMissingError ? notAnErpWithoutVersion(error) : error;
    }
  }

  /**
   * Over JSON-2; when JSON-2 cannot serve the call (it could not select the database: a
   * filtered database that `/jsonrpc` still reaches), back over `/jsonrpc` if the target has it.
   */
  private async json2OrBack(
    call: ErpCall,
    context: CallContext,
    major: number | undefined,
    jsonRpcLeft: boolean,
  ): Promise<ErpOutcome> {
    try {
      return await this.overJson2.call(call, context, major);
    } catch (error) {
      if (error instanceof Json2UnavailableError && jsonRpcLeft) return this.deps.jsonrpc.call(call, context);
      throw this.asV1Error(error);
    }
  }

  /** -32006 speaks of v2; a v1 caller is told what it can do. */
  private asV1Error(error: unknown): unknown {
    if (!(error instanceof Json2UnavailableError)) return error;
    return new Json2UnavailableError(
      error.reason === 'no_database'
        ? 'This target serves v1 calls only over JSON-2 (it has no /jsonrpc, or ERP_V1_TRANSPORT=json2), and JSON-2 could not ' +
            'select the database (it does not exist, or the server picks the database by hostname): check erp_instance.db, ' +
            "and on a multi-tenant host use the database's own hostname as erp_instance.url."
        : `This target serves v1 calls only over JSON-2, and JSON-2 is unavailable there: ${error.message}`,
      error.reason,
      { cause: error },
    );
  }

  private knownGone(call: ErpCall): boolean {
    const until = this.jsonRpcGone.get(targetKey(call));
    return until !== undefined && until > Date.now();
  }

  private rememberGone(call: ErpCall): void {
    const key = targetKey(call);
    this.jsonRpcGone.delete(key);
    if (this.jsonRpcGone.size >= JSONRPC_GONE_MAX_ENTRIES) this.jsonRpcGone.clear();
    this.jsonRpcGone.set(key, Date.now() + JSONRPC_GONE_TTL_MS);
  }
}

/** v2 calls: over JSON-2, or to ERP 16-18 over `/jsonrpc`, by `ERP_V2_TRANSPORT`. */
export class V2Router implements ErpTransport {
  private readonly overJsonRpc: V2OverJsonRpc;

  constructor(
    private readonly mode: V2TransportMode,
    private readonly deps: RoutingDeps,
  ) {
    this.overJsonRpc = new V2OverJsonRpc(deps.jsonrpc);
  }

  knownVersion(baseUrl: URL): string | undefined {
    return this.deps.versions.cached(baseUrl)?.version;
  }

  async call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    try {
      return await this.route(call, context);
    } catch (error) {
      throw withPathHint(error, call.baseUrl);
    }
  }

  private async route(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    const major = this.mode === 'json2' ? undefined : cachedMajor(this.deps, call);
    if (major !== undefined && major < FIRST_JSON2_MAJOR) return this.overJsonRpc.call(call, context);
    try {
      return await this.deps.json2.call(call, context);
    } catch (error) {
      // JSON-2's route is missing (the call did not run): an ERP older than 19 runs it over /jsonrpc
      // (`auto`). Under `json2` the version is asked only of a URL with a path (below).
      if (!(error instanceof Json2UnavailableError) || error.reason !== 'no_json2') throw error;
      if (this.mode === 'json2' && !hasPath(call.baseUrl)) throw error;
      const known = await lookUp(this.deps, call, context);
      // No ERP there either (its version lookup is a redirect or an HTML page too): from a URL with
      // a path, that -32005, which names the address without the path, not "older than 19 (use v1)".
      if (known instanceof BadUpstreamResponseError) throw hasPath(call.baseUrl) ? known : error;
      if (this.mode === 'json2' || known === undefined || known >= FIRST_JSON2_MAJOR) throw error;
      return this.overJsonRpc.call(call, context);
    }
  }
}
