/**
 * @module core/idempotency
 * Writes you can retry (docs/design.md, "The proxy's state: the store"; README, "Retrying writes safely"): a call that can
 * write and carries an `Idempotency-Key` runs at most once per key and caller. The first call is
 * recorded as in progress in the store (`platform/state/state-store.ts`) before the ERP is called; its
 * outcome decides the rest:
 *
 * - ran, answer known (a result): the answer is kept for `IDEMPOTENCY_TTL` and replayed to the same
 *   key and fingerprint with the new request's `id` and `Idempotent-Replayed: true`;
 * - certainly no change (an ERP error: the ERP rolled its transaction back; a proxy error whose
 *   row says the call did not run): the record is deleted, so the same key runs the call again;
 * - may have run (-32003, -32005, -32009, -32603, an answer too large to keep): kept as "outcome
 *   unknown", replayed as -32003 with a message that says so, never run again. So is an attempt
 *   whose function died, or whose answer the store could not keep after the ERP answered (the
 *   caller still gets that answer): its in-progress record outlives its lease, and answers the
 *   same way (-32010 until then).
 *
 * The same key with another fingerprint is -32011; while the first call runs, -32010 with
 * `Retry-After`. The store unreachable: -32004 before the ERP (a write never runs without its
 * record). Right before the call reaches the ERP its record is marked sent (the gate's
 * `idempotency-sent` step, after the limits and before a confirmation is used up): a claim never
 * marked certainly did not run, so once its lease passes a retry with the same key takes it over and
 * runs, never "outcome unknown" (a claim that reached the store late, after its call was refused
 * -32004, is such a claim). The caller, the key and the request arrive as plain values: this module knows no
 * HTTP and no MCP; `core/forward.ts` (and the MCP tools) call {@link runOnce}.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../platform/config.ts';
import { mayHaveRun, PROXY_ERROR_ROWS, PROXY_ERRORS } from '../platform/error-table.ts';
import {
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  ProxyError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../platform/errors.ts';
import { canonicalJson, type OmitMember } from '../platform/json.ts';
import { type IdempotencyRecord, type StateStore, StoreFullError } from '../platform/state/state-store.ts';
import { upstreamTimeoutMs } from '../upstream/time-budget.ts';
import type { Answer, LambdaResponse } from './envelope.ts';
import type { CallerIdentity, InboundCall } from './inbound-call.ts';
import { type IdempotencyOutcome, type RequestFacts, type StoreMeter, withFacts } from './request-facts.ts';

export { checkIdempotencyKey, IDEMPOTENCY_KEY_PATTERN } from './idempotency-key.ts';
export { IDEMPOTENCY_KEY_HEADER } from './inbound-call.ts';
export type { IdempotencyOutcome };
/** The response header of a replayed answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Time an attempt may still need after its ERP deadline (writing its answer to the store): its
 * record stays "in progress" (-32010) until the deadline plus this, then answers "outcome unknown".
 */
export const LEASE_MARGIN_MS = 5_000;
/** Longest `Retry-After` of a -32010: the first call usually ends well within its lease. */
const MAX_RETRY_AFTER_SECONDS = 5;
/** A stored answer is never inflated past this (a corrupt or hostile record cannot exhaust memory). */
const MAX_REPLAY_BYTES = 64 * 1024 * 1024;

/**
 * gzip and gunzip of `node:zlib`, loaded on the first record kept or read: no bundle loads zlib at
 * import (test/infra/bundle.test.ts), and a call without a key never needs it.
 */
async function gzipAsync(bytes: Buffer): Promise<Buffer> {
  const { gzip } = await import('node:zlib');
  return new Promise((resolve, reject) =>
    gzip(bytes, (error, out) => (error ? reject(error) : resolve(out))),
  );
}

async function gunzipAsync(bytes: Uint8Array, options: { maxOutputLength: number }): Promise<Buffer> {
  const { gunzip } = await import('node:zlib');
  return new Promise((resolve, reject) =>
    gunzip(bytes, options, (error, out) => (error ? reject(error) : resolve(out))),
  );
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/**
 * The fingerprint of a request: a hash of the route and the body's canonical text without `id`
 * (`platform/json.ts` `canonicalJson`: member order normalised, number spellings kept) and
 * without the members `omit` names (fields the proxy ignores). Only the hash is stored.
 */
export function fingerprintOf(
  route: string,
  members: ReadonlyMap<string, string>,
  omit?: OmitMember,
): string {
  const parts: string[] = [];
  for (const [name, text] of members) parts.push(`${JSON.stringify(name)}:${text}`);
  const canonical = canonicalJson(
    `{${parts.join(',')}}`,
    (path) => (path.length === 1 && path[0] === 'id') || (omit?.(path) ?? false),
  );
  return digest(`${route}\n${canonical}`);
}

/**
 * Whose an `Idempotency-Key` is, as text: a proxy key by its name; a person signed in with OAuth by
 * the token's issuer and subject, not the identity-map entry (often a whole group); a token without
 * `sub` by its entry alone (what it is known by).
 */
export function idempotencyScope(caller: CallerIdentity): string {
  if (caller.kind === 'key') return `key:${caller.name}`;
  return caller.subject === undefined
    ? `oauth-entry:${caller.issuer} ${caller.entry}`
    : `oauth:${caller.issuer} ${caller.subject}`;
}

/** The store key of a caller's `Idempotency-Key`: a hash, so the table holds no name or key. */
export function recordKeyOf(scope: string, key: string): string {
  return digest(`${scope}\n${key}`);
}

/** Whose record it is, for the embedded store's shares: a hash of the caller, never a name. */
export function recordOwnerOf(scope: string): string {
  return digest(`owner\n${scope}`);
}

/**
 * How long an attempt with an `Idempotency-Key` may run: its ERP deadline (the budget
 * `withCallContext` computes from the same inputs) and the time to record its answer.
 */
export function attemptLeaseMs(
  inbound: Pick<InboundCall, 'requestTimeout' | 'remainingMs'>,
  config: Pick<Config, 'defaultTimeoutSeconds' | 'maxTimeoutSeconds'>,
): number {
  return (
    upstreamTimeoutMs({
      header: inbound.requestTimeout,
      defaultSeconds: config.defaultTimeoutSeconds,
      maxSeconds: config.maxTimeoutSeconds,
      remainingMs: inbound.remainingMs?.(),
    }) + LEASE_MARGIN_MS
  );
}

/** One call that may run at most once. */
export interface IdempotentCall {
  /** The `Idempotency-Key` as sent (checked). */
  readonly key: string;
  /** Whose key it is: `key:<proxy key name>`, or an OAuth person. Never a key itself. */
  readonly scope: string;
  /** {@link fingerprintOf} the request. */
  readonly fingerprint: string;
  /** The `id` the answer echoes (a replay's is this request's, not the first one's). */
  readonly envelopeId: string | null;
  /** How long the attempt may run: its ERP deadline plus {@link LEASE_MARGIN_MS}. */
  readonly leaseMs: number;
  /** The call's audit record (set by the gate's `audit` step): a replay's record names it. */
  readonly auditId?: string;
  /** Where the call's waits on the store add up (`Server-Timing`'s `store`). */
  readonly storeMeter?: StoreMeter | undefined;
}

export interface IdempotencyDeps {
  /** `undefined`: no store configured (a function deployed without a table): keyed writes are refused. */
  readonly store: StateStore | undefined;
  /** `IDEMPOTENCY_TTL`: how long a kept answer is replayed. */
  readonly ttlSeconds: number;
  readonly now?: () => number;
}

/** What a record holds: a known answer (an HTTP one, or a value such as an MCP tool's), or an attempt whose outcome is unknown. */
export type Kept =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly facts: Pick<RequestFacts, 'outcome' | 'errorCode'>;
    }
  | { readonly kind: 'value' }
  /** Ran with an unknown outcome: the error it ended with, or an answer too large to keep. */
  | { readonly kind: 'unknown'; readonly code?: number; readonly tooLarge?: true };

const ENVELOPE_START = '{"jsonrpc":"2.0","id":';

/**
 * Encodes what is kept: a JSON line (what kind, the status and headers) and, for an answer, the
 * envelope's bytes after its `id`, so a replay can put the new request's `id` in front. `undefined`
 * when the answer is not an envelope this module can re-address (then it is kept as unknown).
 */
function keptBytes(kept: Kept, response?: LambdaResponse, envelopeId?: string | null): Buffer | undefined {
  const line = Buffer.from(`${JSON.stringify({ v: 1, ...kept })}\n`, 'utf8');
  if (kept.kind !== 'answer' || response === undefined) return line;
  const body = response.bodyBytes ?? Buffer.from(response.body, 'utf8');
  const start = Buffer.from(`${ENVELOPE_START}${JSON.stringify(envelopeId ?? null)}`, 'utf8');
  if (body.length < start.length || !body.subarray(0, start.length).equals(start)) return undefined;
  return Buffer.concat([line, body.subarray(start.length)]);
}

/** The kept record's content, or `undefined` when it cannot be read (answered as unknown). */
async function readKept(answer: Uint8Array): Promise<{ kept: Kept; rest: Buffer } | undefined> {
  try {
    const bytes = await gunzipAsync(answer, { maxOutputLength: MAX_REPLAY_BYTES });
    const newline = bytes.indexOf(0x0a);
    if (newline < 0) return undefined;
    const kept = JSON.parse(bytes.toString('utf8', 0, newline)) as Kept & { v?: number };
    if (kept.v !== 1 || !['answer', 'value', 'unknown'].includes(kept.kind)) return undefined;
    return { kept, rest: bytes.subarray(newline + 1) };
  } catch {
    return undefined;
  }
}

/** The answer of a replay: what was kept, with this request's `id` and `Idempotent-Replayed`. */
function replayedAnswer(
  kept: Extract<Kept, { kind: 'answer' }>,
  rest: Buffer,
  envelopeId: string | null,
  replayOf: string | undefined,
): Answer {
  const bodyBytes = Buffer.concat([
    Buffer.from(`${ENVELOPE_START}${JSON.stringify(envelopeId)}`, 'utf8'),
    rest,
  ]);
  return {
    response: {
      statusCode: kept.status,
      headers: { ...kept.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
      body: '',
      bodyBytes,
    },
    facts: {
      ...kept.facts,
      idempotency: 'replayed',
      ...(replayOf === undefined ? {} : { auditReplayOf: replayOf }),
    },
  };
}

/** The -32003 a call with an unknown outcome is answered with, from its first attempt on. */
function outcomeUnknown(kept: Extract<Kept, { kind: 'unknown' }> | undefined): UpstreamTimeoutError {
  const first =
    kept?.tooLarge === true
      ? 'ran, but its answer was too large to keep for replays'
      : kept?.code !== undefined
        ? `ended with ${kept.code}, so it may have run`
        : 'did not finish recording its outcome (its function stopped, or the store could not be reached, before its answer was kept)';
  return withFacts(
    new UpstreamTimeoutError(
      `The first call with this Idempotency-Key ${first}: its outcome is unknown. The proxy will not run it again under this key. Check in the ERP whether it took effect; if it did not and must run, send it with a new Idempotency-Key.`,
      { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } },
    ),
    { idempotency: 'unknown_replayed' },
  );
}

function refusal<E>(error: E, idempotency: IdempotencyOutcome, auditReplayOf?: string): E {
  return withFacts(error, auditReplayOf === undefined ? { idempotency } : { idempotency, auditReplayOf });
}

/** An answer from a record names the audit record of the run it answers for. */
function replayOf<E>(error: E, existing: IdempotencyRecord): E {
  return existing.auditId === undefined ? error : withFacts(error, { auditReplayOf: existing.auditId });
}

/** What a live record answers: a replay, -32011, -32010, or "outcome unknown". */
async function answerExisting<T>(
  call: IdempotentCall,
  existing: IdempotencyRecord,
  now: number,
  keeping: Keeping<T>,
): Promise<T> {
  if (existing.fingerprint !== call.fingerprint) {
    throw refusal(
      new IdempotencyKeyReusedError(
        'This Idempotency-Key was already used for a different request (another route, body or ERP): nothing ran. Use a new key for a new operation.',
      ),
      'key_reused',
    );
  }
  if (existing.state === 'in-progress') {
    if (existing.leaseUntil >= now) {
      const seconds = Math.min(
        MAX_RETRY_AFTER_SECONDS,
        Math.max(1, Math.ceil((existing.leaseUntil - now) / 1000)),
      );
      throw refusal(
        new IdempotencyInProgressError(
          `A call with this Idempotency-Key is still running: retry with the same key in ${seconds} s to get its answer.`,
          { headers: { 'retry-after': String(seconds) } },
        ),
        'in_progress',
      );
    }
    throw replayOf(outcomeUnknown(undefined), existing);
  }
  const read = existing.answer === undefined ? undefined : await readKept(existing.answer);
  if (read === undefined) {
    throw replayOf(outcomeUnknown({ kind: 'unknown', code: PROXY_ERRORS.internal.code }), existing);
  }
  if (read.kept.kind === 'unknown') throw replayOf(outcomeUnknown(read.kept), existing);
  const replayed = keeping.replay(read.kept, read.rest, call.envelopeId, existing.auditId);
  if (replayed === undefined) {
    throw replayOf(outcomeUnknown({ kind: 'unknown', code: PROXY_ERRORS.internal.code }), existing);
  }
  return replayed;
}

/** What a result means for its record, and how a replay is made from the record. */
export interface Keeping<T> {
  /** `keep`: the bytes to keep; `forget`: certainly no change; `unknown`: may have run (the code it ended with). */
  judge(result: T): { readonly keep: Buffer } | { readonly forget: true } | { readonly unknown: number };
  /**
   * The result of a replay (`undefined`: the record holds another kind of result); `replayOf`: the
   * audit record of the run replayed (its facts' `auditReplayOf`).
   */
  replay(
    kept: Exclude<Kept, { kind: 'unknown' }>,
    rest: Buffer,
    envelopeId: string | null,
    replayOf?: string,
  ): T | undefined;
  /** The result with what the key did, for the log line. */
  noted(result: T, idempotency: IdempotencyOutcome): T;
}

/** The bytes that keep a value (an MCP tool's answer): its JSON. */
export function keptValueBytes(value: unknown): Buffer {
  return Buffer.concat([keptBytes({ kind: 'value' }) as Buffer, Buffer.from(JSON.stringify(value), 'utf8')]);
}

/** The value kept by {@link keptValueBytes}, or `undefined` when the record holds something else. */
export function keptValue(
  kept: Exclude<Kept, { kind: 'unknown' }>,
  rest: Buffer,
): { readonly value: unknown } | undefined {
  if (kept.kind !== 'value') return undefined;
  try {
    return { value: JSON.parse(rest.toString('utf8')) };
  } catch {
    return undefined;
  }
}

/** Whether a proxy error code says the call certainly did not run (its rows in the table agree). */
export function certainlyDidNotRun(code: number | undefined): boolean {
  const rows = PROXY_ERROR_ROWS.filter((row) => row.code === code);
  return rows.length > 0 && rows.every((row) => !mayHaveRun(row));
}

/** The execute routes' results: HTTP answers whose envelope is kept and replayed with the new `id`. */
export function answerKeeping(envelopeId: string | null): Keeping<Answer> {
  return {
    judge(answer) {
      // The ERP's own error: Odoo rolled its transaction back, so nothing changed.
      if (answer.facts.outcome !== 'success') return { forget: true };
      const bytes = keptBytes(
        {
          kind: 'answer',
          status: answer.response.statusCode,
          headers: answer.response.headers,
          facts: { outcome: answer.facts.outcome },
        },
        answer.response,
        envelopeId,
      );
      return bytes === undefined ? { unknown: PROXY_ERRORS.internal.code } : { keep: bytes };
    },
    replay: (kept, rest, id, replayOf) =>
      kept.kind === 'answer' ? replayedAnswer(kept, rest, id, replayOf) : undefined,
    noted: (answer, idempotency) => ({ response: answer.response, facts: { ...answer.facts, idempotency } }),
  };
}

/** Why the store could not take the record, as the -32004 says it. */
function storeProblem(cause: unknown, configured: boolean): string {
  if (!configured) {
    return 'No idempotency store is configured for this function, so a write with an Idempotency-Key is not run: send it without the header, or ask an operator.';
  }
  if (cause instanceof StoreFullError) {
    return `The local idempotency store is full${cause.forCaller ? ' for this caller' : ''}, so the call was not run (a write with an Idempotency-Key never runs without its record): retry with the same key once earlier records expire (IDEMPOTENCY_TTL), or ask an operator to raise LOCAL_STORE_MAX_BYTES or LOCAL_STORE_MAX_RECORDS.`;
  }
  return "The idempotency store could not be reached, so the call was not run (a write with an Idempotency-Key never runs without its record): retry with the same key (if the store kept this call's claim after all, the retry is answered -32010 until the claim's lease passes, then runs).";
}

/** The call's record could not be marked sent: the call is not sent to the ERP (-32004). */
function notMarkedSent(cause: unknown): UpstreamUnavailableError {
  const why =
    cause === undefined
      ? "this call's claim on its Idempotency-Key passed its lease before the call was sent"
      : 'the idempotency store could not be reached right before the call was sent';
  return refusal(
    new UpstreamUnavailableError(
      `Nothing was sent to the ERP: ${why}. Retry with the same key: the retry gets the answer of the attempt that holds the key (-32010 while it runs), or runs the call.`,
      { headers: { 'retry-after': '1' }, ...(cause === undefined ? {} : { cause }) },
    ),
    'store_unavailable',
  );
}

/** The store could not be asked: the call is not run (-32004), never run without its record. */
function storeUnavailable(cause: unknown, configured: boolean): UpstreamUnavailableError {
  return refusal(
    new UpstreamUnavailableError(storeProblem(cause, configured), { headers: { 'retry-after': '1' }, cause }),
    'store_unavailable',
  );
}

/**
 * What runs under a record: the ERP call, and whatever comes between the lookup and it (the
 * confirmation, the limits). `sent` marks the record right before the ERP is reached (it throws
 * -32004 when it cannot: nothing is then sent); a run that never calls it reached no ERP.
 */
export type RunUnderRecord<T> = (sent: () => Promise<void>) => Promise<T>;

/**
 * Runs `run` at most once for `call`'s key and caller, or answers from the store without running
 * it.
 */
export function runOnce(
  deps: IdempotencyDeps,
  call: IdempotentCall,
  run: RunUnderRecord<Answer>,
): Promise<Answer> {
  return runOnceWith(deps, call, run, answerKeeping(call.envelopeId));
}

/** {@link runOnce} for results of any kind: `keeping` says what each means for its record. */
export async function runOnceWith<T>(
  deps: IdempotencyDeps,
  call: IdempotentCall,
  run: RunUnderRecord<T>,
  keeping: Keeping<T>,
): Promise<T> {
  const { store } = deps;
  if (store === undefined) throw storeUnavailable(undefined, false);
  const timed = <W>(work: Promise<W>): Promise<W> => call.storeMeter?.timed(work) ?? work;
  const now = (deps.now ?? Date.now)();
  const recordKey = recordKeyOf(call.scope, call.key);
  const token = randomUUID();
  let begun: Awaited<ReturnType<StateStore['beginAttempt']>>;
  try {
    begun = await timed(
      store.beginAttempt(
        {
          key: recordKey,
          owner: recordOwnerOf(call.scope),
          fingerprint: call.fingerprint,
          token,
          leaseUntil: now + call.leaseMs,
          // Counted from the end of the lease: an attempt still running (a lease longer than
          // IDEMPOTENCY_TTL) is never taken for an expired record and run again, and one whose
          // function died after marking it sent answers "outcome unknown" for the whole TTL.
          expiresAt: Math.ceil((now + call.leaseMs) / 1000) + deps.ttlSeconds,
          ...(call.auditId === undefined ? {} : { auditId: call.auditId }),
        },
        now,
      ),
    );
  } catch (error) {
    // Its write may have been applied: undone when the store answers again (best effort; if not,
    // the claim, never marked sent, is taken over by a retry once its lease passes).
    store.abandonAttempt(recordKey, token).catch(() => undefined);
    throw storeUnavailable(error, true);
  }
  if (!begun.begun) return answerExisting(call, begun.existing, now, keeping);

  const expiresAt = (): number => Math.floor((deps.now ?? Date.now)() / 1000) + deps.ttlSeconds;
  const keep = async (bytes: Buffer): Promise<boolean> => {
    try {
      let compressed = await gzipAsync(bytes);
      // Too large for the store: kept as unknown, since it ran and cannot be replayed.
      if (compressed.byteLength > store.maxAnswerBytes) {
        compressed = await gzipAsync(keptBytes({ kind: 'unknown', tooLarge: true }) as Buffer);
      }
      return await timed(store.completeAttempt(recordKey, token, compressed, expiresAt()));
    } catch {
      return false;
    }
  };
  const forget = async (): Promise<void> => {
    // When the store cannot be told: a record marked sent answers "outcome unknown" once its
    // lease passes (at most once, at the cost of a call that could have run again); one never
    // marked is taken over by a retry.
    await timed(store.abandonAttempt(recordKey, token).catch(() => false));
  };
  const keepUnknown = (code: number): Promise<boolean> =>
    keep(keptBytes({ kind: 'unknown', code }) as Buffer);

  /** Whether the run marked its record sent: before that, nothing reached the ERP. */
  let marked = false;
  const sent = async (): Promise<void> => {
    let held: boolean;
    try {
      held = await timed(store.markSent(recordKey, token));
    } catch (error) {
      throw notMarkedSent(error);
    }
    if (!held) throw notMarkedSent(undefined);
    marked = true;
  };
  let result: T;
  try {
    result = await run(sent);
  } catch (error) {
    // Never marked sent: nothing left the proxy, whatever the error (a bug before the ERP included).
    if (!marked || (error instanceof ProxyError && !mayHaveRun(error.row))) {
      await forget();
      throw refusal(error, 'not_kept');
    }
    const code = error instanceof ProxyError ? error.code : PROXY_ERRORS.internal.code;
    throw refusal(error, (await keepUnknown(code)) ? 'kept_unknown' : 'unrecorded');
  }
  const judged = keeping.judge(result);
  if ('forget' in judged) {
    await forget();
    return keeping.noted(result, 'not_kept');
  }
  if ('unknown' in judged) {
    return keeping.noted(result, (await keepUnknown(judged.unknown)) ? 'kept_unknown' : 'unrecorded');
  }
  return keeping.noted(result, (await keep(judged.keep)) ? 'recorded' : 'unrecorded');
}
