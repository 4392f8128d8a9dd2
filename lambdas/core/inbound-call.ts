/**
 * @module core/inbound-call
 * What the core needs of one inbound HTTP call, and nothing else: the middleware layer builds it
 * from the API Gateway event (`middleware/inbound-edge.ts`), so the core never sees an event and
 * its tests need no fake events.
 */
import type { AnswerLease } from '../platform/answer-budget.ts';
import type { JsonDocument } from '../platform/json.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import type { TraceContext } from '../platform/trace-context.ts';
import type { StoreMeter } from './request-facts.ts';
import type { Encoding } from './response-encoding.ts';

/**
 * The request body, read once after the caller was authenticated, in one scan: the parsed JSON,
 * each top-level member's text (`params`, `keyword` and `kwargs` are forwarded as the client
 * spelled them) and whether it nests too deep; or why it could not be read.
 */
export type InboundBody =
  | Extract<JsonDocument, { readonly ok: true }>
  | { readonly ok: false; readonly problem?: string };

/**
 * Who calls, as a value (issues 39 and 40 key idempotency records and rate budgets by it): a proxy
 * key, by its name (the names of a rotation's old and new key are one), or a person signed in with
 * OAuth (`POST /mcp`), by the token's issuer and subject, with the identity-map entry that gave
 * the connection (a token without `sub` is known by that entry alone).
 */
export type CallerIdentity =
  | { readonly kind: 'key'; readonly name: string }
  | {
      readonly kind: 'oauth';
      readonly issuer: string;
      readonly subject: string | undefined;
      readonly entry: string;
      /** The client the token was issued to (`client_id` or `azp`), when it names one. */
      readonly clientId?: string;
    };

export interface InboundCall {
  readonly body: InboundBody;
  /** Who calls: the proxy key's name, or the signed-in person. */
  readonly identity: CallerIdentity;
  /** The envelope `id` to echo (from the body); `null` when it has none or could not be read. */
  readonly envelopeId: string | null;
  /** The policy of the caller's proxy key (README, "Key policies"); `undefined`: the key has none. */
  readonly keyPolicy: KeyPolicy | undefined;
  /** `x-api-key` as the caller sent it: an `erp_instance.api_key` equal to it is refused. */
  readonly presentedProxyKey: string | undefined;
  /** `x-request-timeout` as sent (integer seconds, parsed by the time budget). */
  readonly requestTimeout: string | undefined;
  /** The response encoding negotiated from `Accept-Encoding`: a client that accepts gzip or br may receive larger answers. */
  readonly responseEncoding: Encoding | undefined;
  /** The caller's address, passed to the ERP as `X-Forwarded-For`. */
  readonly sourceIp: string | undefined;
  /** Milliseconds left before the function is cut off, read when the call starts; none locally in tests. */
  readonly remainingMs: (() => number) | undefined;
  /** The request's id (API Gateway's, or the local server's): the log line's `request_id`. */
  readonly requestId?: string | undefined;
  /** The request's W3C trace (middleware/observe.ts): each ERP request continues it; none in some tests. */
  readonly trace?: TraceContext | undefined;
  /** Where the request's waits on the state store and the audit's add up (`Server-Timing`'s `store`). */
  readonly storeMeter?: StoreMeter | undefined;
  /** The invocation's share of the local server's memory for ERP answers; none on Lambda. */
  readonly answerLease?: AnswerLease;
}

/**
 * The request header of writes you can retry (lower-cased, as API Gateway and the local server hand
 * it over). Here, not in core/idempotency.ts, so the edge reads it without loading that module
 * into the bundles of functions that never use it (version).
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** An execute call: its `Idempotency-Key` too (README, "Retrying writes safely"). */
export interface ExecuteCall extends InboundCall {
  /** The `Idempotency-Key` header as sent (checked by `core/idempotency.ts`); `undefined` when absent. */
  readonly idempotencyKey: string | undefined;
}
