/**
 * @module core/request-facts
 * What one request learns on its way, as values: each step of the chain returns its facts (the
 * caller, the envelope `id`, the parsed call, the target, the upstream outcome, the encoded
 * answer), the handler returns its answer with its facts, and an error thrown after a step learned
 * something carries those facts ({@link withFacts}). The edge (`middleware/observe.ts`) assembles
 * the request log line and the metrics from them. Never holds a secret, `params`, `kwargs` or a
 * result.
 *
 * The one record of a request (`RequestRecord`, on the context) is created by observe, written by
 * the chain builder alone (`handlers/chain.ts`, merging what each step and the handler return) and
 * read by observe alone.
 */

import type { Context } from 'aws-lambda';
import type { WithAnswerLease } from '../platform/answer-budget.ts';
import type { AuditOutcome } from '../platform/audit/audit-record.ts';
import type { BrakeMode, BrakeScopeKind } from '../platform/brakes/brakes.ts';
import { monotonicMs } from '../platform/clock.ts';
import type { KeyPolicyRule } from '../platform/key-policy.ts';
import type { LimitRule } from '../platform/limits.ts';
import type {
  ApiName,
  ConfirmationOutcome,
  IdempotencyOutcome,
  Outcome,
  UpstreamProtocol,
} from '../platform/names.ts';
import type { TraceContext } from '../platform/trace-context.ts';

export type { ApiName, ConfirmationOutcome, IdempotencyOutcome, Outcome };

/** What a step, the handler or an error tells the request log line and the metrics. */
export interface RequestFacts {
  /** The envelope `id` to echo; `null` when the body could not be read. */
  readonly envelopeId?: string | null;
  /** Name of the proxy key that authenticated the caller. */
  readonly callerKeyName?: string;
  /** v1 action, or v2 method (or the operator path). */
  readonly action?: string;
  readonly model?: string;
  readonly erpHost?: string;
  readonly erpDb?: string;
  readonly upstreamStatus?: number;
  /** Milliseconds spent waiting on the upstream (sum over calls). */
  readonly upstreamMs?: number;
  /** The ERP protocol that served the call (`/jsonrpc` or JSON-2). */
  readonly upstreamProtocol?: UpstreamProtocol;
  /** The W3C trace id of the call: its caller's (`traceparent`, or `_meta.traceparent` on `/mcp`), or one the proxy started. */
  readonly traceId?: string;
  readonly outcome?: Outcome;
  readonly errorCode?: number;
  /** Size of the response body sent to the client. */
  readonly responseBytes?: number;
  /** `POST /mcp`: the JSON-RPC method of the MCP message (`initialize`, `tools/list`, `tools/call`...). */
  readonly mcpMethod?: string;
  /**
   * `POST /mcp`: the tool a `tools/call` named, one of the tools declared in core/mcp/tools.ts
   * (`McpToolName` there: set only from a declaration, never from the request's text; typed as a
   * string here, which that module's own imports reach).
   */
  readonly tool?: string;
  /** The rule of the caller key's policy that refused the call (README, "Key policies"). */
  readonly policyRule?: KeyPolicyRule;
  /** The limit that refused the call (README, "Limits"): `key_minute`, `erp_in_flight`... */
  readonly limitRule?: LimitRule;
  /** The configured host of the ERP limit that refused the call. */
  readonly limitHost?: string;
  /** Limits applied to the call but the store could not be asked: it was served (fail open). */
  readonly limitsFailedOpen?: boolean;
  /** The operator's brake that stopped the call (-32012): its id (the log line's), scope kind and mode (the `Braked` metric's). */
  readonly brake?: { readonly id: string; readonly scope: BrakeScopeKind; readonly mode: BrakeMode };
  /**
   * What an `Idempotency-Key` did to the call (README, "Retrying writes safely"): `recorded` (ran,
   * answer kept), `not_kept` (certainly no change: the key may run it again), `kept_unknown` (may
   * have run: kept as outcome unknown), `unrecorded` (ran, but its record could not be written),
   * `replayed`, `unknown_replayed` (answered "outcome unknown" from the record), `in_progress`
   * (-32010), `key_reused` (-32011), `store_unavailable` (-32004, nothing ran).
   */
  readonly idempotency?: IdempotencyOutcome;
  /** How a person's confirmation of an MCP write ended (docs/guide/confirmations.md). */
  readonly confirmation?: ConfirmationOutcome;
  /** The ERP's exception name of an `erp_error` (the audit record's `error.name`). */
  readonly erpException?: string;
  /** A confirmation's id (a hash of its state's nonce) and the digest of the form shown (docs/guide/audit.md). */
  readonly confirmationId?: string;
  readonly formDigest?: string;
  /** The call's audit record (docs/guide/audit.md): its id (the log line's `audit_id`) and outcome. */
  readonly auditId?: string;
  readonly auditOutcome?: AuditOutcome;
  /** Writes of the call's audit record that failed (the `AuditWriteFailures` metric), and why (first words). */
  readonly auditWriteFailures?: number;
  readonly auditError?: string;
  /** A replay: the `audit_id` of the run it replays (kept with the idempotency record). */
  readonly auditReplayOf?: string;
  /**
   * A bug caught where the answer must still be a normal one (an MCP tool's result, with
   * `isError: true` and -32603): the request log line shows its stack, as for a thrown one.
   */
  readonly internalError?: unknown;
}

/**
 * The writable form of {@link RequestFacts}: the request record's (written by `learn` alone), and
 * a fresh object a function builds and returns as its facts. Never passed to another function to
 * be written: facts travel as returned values (docs/design.md, section 3a).
 */
export type FactSheet = { -readonly [K in keyof RequestFacts]: RequestFacts[K] };

/**
 * The request record's facts before anything is learned: every field present (undefined), in
 * one order, so the record keeps one shape (one V8 hidden class) however the steps' facts are
 * merged into it, instead of growing field by field in each request's own order. Merge only
 * partial facts into it: a field merged as undefined would erase one learned.
 */
export function emptyFacts(): FactSheet {
  return {
    envelopeId: undefined,
    callerKeyName: undefined,
    action: undefined,
    model: undefined,
    erpHost: undefined,
    erpDb: undefined,
    upstreamStatus: undefined,
    upstreamMs: undefined,
    upstreamProtocol: undefined,
    traceId: undefined,
    outcome: undefined,
    errorCode: undefined,
    responseBytes: undefined,
    mcpMethod: undefined,
    tool: undefined,
    policyRule: undefined,
    limitRule: undefined,
    limitHost: undefined,
    limitsFailedOpen: undefined,
    brake: undefined,
    confirmation: undefined,
    erpException: undefined,
    confirmationId: undefined,
    formDigest: undefined,
    auditId: undefined,
    auditOutcome: undefined,
    auditWriteFailures: undefined,
    auditError: undefined,
    auditReplayOf: undefined,
    internalError: undefined,
  };
}

/** Where an error keeps the facts learned before it was thrown. */
const LEARNED: unique symbol = Symbol('erp-proxy.learned');

type CarriesFacts = { [LEARNED]?: RequestFacts };

/**
 * Lets `error` carry `facts` to the edge (the log line of a -32003 still shows the action, model
 * and target learned before it). Facts the error already carries win: they were learned later,
 * closer to the failure. A thrown value that is not an object, or a frozen one, cannot carry
 * facts (and is thrown as it is). The error must be the request's own: every error the proxy
 * throws after the body is read is created for its request (none is cached and shared).
 */
export function withFacts<E>(error: E, facts: RequestFacts): E {
  if (typeof error === 'object' && error !== null && Object.isExtensible(error)) {
    const carrier = error as CarriesFacts;
    carrier[LEARNED] = Object.assign({}, facts, carrier[LEARNED]);
  }
  return error;
}

/** The facts an error carries (none for a value that was never given any). */
export function factsOf(error: unknown): RequestFacts {
  return (typeof error === 'object' && error !== null && (error as CarriesFacts)[LEARNED]) || {};
}

/** Runs `step`; whatever it throws carries `facts` (see {@link withFacts}). */
export async function learnedBefore<T>(facts: RequestFacts, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw withFacts(error, facts);
  }
}

/**
 * The time one request waited on the state store or the audit's store (`Server-Timing`'s `store`):
 * each wait is passed through {@link timed}; waits that overlap count once.
 */
export class StoreMeter {
  /** Milliseconds waited; `undefined`: the request used no store. */
  ms: number | undefined;
  #waiting = 0;
  #since = 0;

  async timed<T>(work: Promise<T>): Promise<T> {
    if (this.#waiting++ === 0) this.#since = monotonicMs();
    try {
      return await work;
    } finally {
      if (--this.#waiting === 0) this.ms = (this.ms ?? 0) + monotonicMs() - this.#since;
    }
  }
}

/**
 * What observe (middleware/observe.ts) gives every chain before its first step, as values: the
 * request's trace and its store meter, which the edge hands the core on its inbound call.
 */
export interface Observed {
  readonly trace: TraceContext;
  readonly storeMeter: StoreMeter;
}

/** The request's one record (see the module comment). */
export interface RequestRecord {
  readonly api: ApiName;
  /** {@link monotonicMs} (platform/clock.ts) when the chain started. */
  readonly startedAt: number;
  /** The request's store meter (also among its values, for the edge). */
  readonly storeMeter: StoreMeter;
  /** The facts merged so far (by `learn` alone). */
  readonly facts: FactSheet;
  /** What the steps returned for later steps and the handler (the caller, the body...). */
  readonly values: Record<string, unknown>;
}

/**
 * The Lambda context as the proxy's handlers see it: the request's record, and on the local
 * server the invocation's answer lease.
 */
export interface ProxyContext extends Context, WithAnswerLease {
  /** Created by observe's `before`; written by the chain builder only; read by observe. */
  record?: RequestRecord;
}
