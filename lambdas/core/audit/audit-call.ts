/**
 * @module core/audit/audit-call
 * One call's audit record (docs/guide/audit.md), written at the gate's two audit steps
 * (core/gate.ts): `audit` opens it before every other step, `audit-pending` writes it `pending`
 * right before the ERP (after the limits, before a confirmation is used up), and its end is
 * written whatever ended the call:
 *
 * - a call that reached `audit-pending`: its end is written as soon as its run ends, while the
 *   idempotency record is written (the `audit` step awaits it before the answer: a frozen Lambda
 *   runs nothing after it);
 * - a call a step ended earlier (a refusal, a replay, the person's no): by the `audit` step.
 *
 * With `AUDIT=on`, a pending record that cannot be written refuses the call before the ERP
 * (-32004, nothing sent); with `best-effort` the call goes on. A record's end that cannot be written
 * never changes the call's answer: it is counted (`AuditWriteFailures`), and a pending record left
 * behind reads `unknown` once its time has passed.
 */

import {
  AUDIT_LIST_MAX,
  AUDIT_POINTERS_MAX,
  AUDIT_SCHEMA_VERSION,
  type AuditApi,
  type AuditIdempotency,
  type AuditOutcome,
  type AuditRecord,
  auditExpiry,
  newAuditId,
} from '../../platform/audit/audit-record.ts';
import { type AuditWriter, pointersOf } from '../../platform/audit/audit-store.ts';
import { type DigestKey, type DigestKeySource, hmacOf } from '../../platform/audit/digest-key.ts';
import { printable } from '../../platform/bounded-text.ts';
import { PROXY_ERRORS } from '../../platform/error-table.ts';
import { ProxyError, UpstreamUnavailableError } from '../../platform/errors.ts';
import type { KeyPolicy } from '../../platform/key-policy.ts';
import { hostOfUrl } from '../../platform/limits.ts';
import type { AuditMode } from '../../platform/names.ts';
import type { ErpCall } from '../../upstream/erp-transport.ts';
import { certainlyDidNotRun, idempotencyScope } from '../idempotency.ts';
import type { CallerIdentity } from '../inbound-call.ts';
import { factsOf, type IdempotencyOutcome, type RequestFacts, type StoreMeter } from '../request-facts.ts';
import { auditedRequest, type CallContent, callContent } from './call-content.ts';

/** What the audit needs of the runtime (built by {@link auditDeps}). */
export interface AuditDeps {
  /**
   * Opens a call's record (the gate's `audit` step): given here, so the gate, which the version
   * function bundles too, holds no audit code of its own.
   */
  readonly open: <T>(subject: AuditSubject<T>, call: AuditedCall) => AuditWriting<T>;
  /** `AUDIT`. */
  readonly mode: AuditMode;
  /** `undefined`: none configured (a function deployed without the table): with `on`, writes are refused. */
  readonly store: AuditWriter | undefined;
  readonly digestKey: DigestKeySource;
  /** `AUDIT_RETENTION_DAYS`. */
  readonly retentionDays: number;
  readonly now?: () => number;
}

/** What a route tells the audit of a call that can write, and of how its value ended. */
export interface AuditSubject<T> {
  readonly api: AuditApi;
  readonly tool?: string;
  /** The MCP client's name and version, as it said them. */
  readonly client?: { readonly name: string; readonly version?: string };
  readonly erp: {
    readonly url: URL;
    readonly db: string;
    readonly uid: number | undefined;
    readonly apiKey: string;
  };
  /** The request log line's `request_id`. */
  readonly requestId?: string;
  /** The call's W3C trace id (the log line's `trace_id`). */
  readonly traceId?: string;
  /** Where the call's waits on the store add up (`Server-Timing`'s `store`). */
  readonly storeMeter?: StoreMeter;
  /** The `Idempotency-Key` as sent (only its HMAC is recorded). */
  readonly idempotencyKey?: string;
  /** The call's value's facts (its outcome, what its key and confirmation did). */
  factsOf(value: T): RequestFacts;
  /** The ids a create's value answered. */
  createdIds(value: T): readonly number[] | undefined;
}

/** Who calls and on what question, as the gate has them. */
export interface AuditedCall {
  readonly inbound: { readonly identity: CallerIdentity; readonly keyPolicy: KeyPolicy | undefined };
  readonly question: { readonly model?: string | undefined; readonly method?: string | undefined };
  readonly requests?: readonly ErpCall[] | undefined;
}

/** The refusal of a call whose pending record could not be written (`AUDIT=on`). */
function auditUnavailable(cause: unknown): UpstreamUnavailableError {
  return new UpstreamUnavailableError(
    'The audit record could not be written; nothing was sent to the ERP. Retry shortly.',
    { headers: { 'retry-after': '1' }, ...(cause === undefined ? {} : { cause }) },
  );
}

/** What an idempotency key did, as a record says it. */
function keyDid(outcome: IdempotencyOutcome | undefined): AuditIdempotency {
  switch (outcome) {
    case 'replayed':
      return 'replay';
    case 'unknown_replayed':
      return 'unknown_replay';
    case 'key_reused':
      return 'conflict';
    case 'in_progress':
      return 'in_progress';
    case 'store_unavailable':
      return 'store_unavailable';
    default:
      return 'first_run';
  }
}

/** A list kept at its first {@link AUDIT_LIST_MAX} items, with its length when longer. */
function bounded<T>(list: readonly T[]): { readonly items: readonly T[]; readonly count?: number } {
  return list.length > AUDIT_LIST_MAX
    ? { items: list.slice(0, AUDIT_LIST_MAX), count: list.length }
    : { items: list };
}

interface Ended {
  readonly outcome: AuditOutcome;
  readonly error?: AuditRecord['error'];
}

/**
 * How a call ended, from its facts: `reachedPending` says whether it passed every check (then a
 * failure says by its row whether it ran), `code` the thrown error's code and whether it may have run.
 */
function endOf(
  facts: RequestFacts,
  reachedPending: boolean,
  thrown?: { code: number; didNotRun: boolean; ran: boolean },
): Ended {
  const code = thrown?.code ?? facts.errorCode;
  switch (facts.idempotency) {
    case 'replayed':
      return { outcome: 'replayed' };
    case 'unknown_replayed':
      return { outcome: 'replayed', error: { code: code ?? PROXY_ERRORS.upstreamTimeout.code } };
    case 'key_reused':
      return {
        outcome: 'refused',
        error: { code: PROXY_ERRORS.idempotencyKeyReused.code, rule: 'idempotency_conflict' },
      };
    case 'in_progress':
      return {
        outcome: 'refused',
        error: { code: PROXY_ERRORS.idempotencyInProgress.code, rule: 'idempotency_in_progress' },
      };
    default:
      break;
  }
  switch (facts.confirmation) {
    case 'asked':
    case 'expired':
      if (thrown === undefined) return { outcome: 'asked' };
      break;
    case 'declined':
    case 'cancelled':
      return { outcome: 'refused', error: { rule: `confirmation_${facts.confirmation}` } };
    case 'invalid':
      return { outcome: 'refused', error: { ...(code === undefined ? {} : { code }), rule: 'confirmation' } };
    default:
      break;
  }
  if (thrown === undefined && facts.outcome === 'success') return { outcome: 'ok' };
  if (thrown === undefined && facts.outcome === 'erp_error') {
    return {
      outcome: 'erp_error',
      error: {
        ...(code === undefined ? {} : { code }),
        ...(facts.erpException === undefined ? {} : { name: facts.erpException }),
      },
    };
  }
  const failure = code ?? PROXY_ERRORS.internal.code;
  const rule =
    facts.policyRule ??
    facts.limitRule ??
    (facts.brake === undefined ? undefined : 'brake') ??
    (facts.idempotency === 'store_unavailable' && !reachedPending ? 'idempotency_store' : undefined);
  if (rule !== undefined || (!reachedPending && REFUSAL_CODES.has(failure))) {
    return { outcome: 'refused', error: { code: failure, ...(rule === undefined ? {} : { rule }) } };
  }
  // Before `audit-pending` with no step saying no (a lookup of the policy step that failed, a bug):
  // the write was never sent.
  if (!reachedPending) return { outcome: 'not_run', error: { code: failure } };
  const didNotRun = thrown?.didNotRun ?? certainlyDidNotRun(failure);
  const ran = thrown?.ran ?? failure === PROXY_ERRORS.responseTooLarge.code;
  return { outcome: didNotRun ? 'not_run' : ran ? 'ran' : 'unknown', error: { code: failure } };
}

/** A refused call's pointer items at most (a refusal costs the store little, whatever it names). */
export const AUDIT_REFUSED_POINTERS = 10;
/** The longest text a record keeps of what a caller or a token chose (a database, an issuer, a subject...). */
export const AUDIT_TEXT_MAX = 256;
/** A record's JSON at most: far below DynamoDB's 400 KB item, and small enough to page through. */
export const AUDIT_RECORD_MAX_BYTES = 16 * 1024;

/** Why a write of a record failed, for the log line: the error's kind and first words, never a value. */
function problemOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, 200);
}

/** A list shortened to its first `keep` items, with its full count. */
function shortened<K extends 'record_ids' | 'created_ids' | 'fields'>(
  record: AuditRecord,
  name: K,
  keep: number,
): Partial<AuditRecord> {
  const list = record[name] as readonly unknown[] | undefined;
  if (list === undefined || list.length <= keep) return {};
  const countName = `${name}_count` as const;
  const count = (record[countName] as number | undefined) ?? list.length;
  return { [name]: list.slice(0, keep), [countName]: count } as Partial<AuditRecord>;
}

/**
 * `record` within {@link AUDIT_RECORD_MAX_BYTES}: its lists of ids and field names shortened (their
 * counts and the ids' digest kept) until it fits.
 */
export function fittedRecord(record: AuditRecord): AuditRecord {
  // A refusal, which no limit counts, keeps only the first few of each list: whatever a refused
  // caller names, its record stays a small write of the day's partitions.
  let fitted: AuditRecord =
    record.outcome === 'refused'
      ? {
          ...record,
          ...shortened(record, 'record_ids', AUDIT_REFUSED_POINTERS),
          ...shortened(record, 'fields', AUDIT_REFUSED_POINTERS),
        }
      : record;
  for (const keep of [100, 10, 0]) {
    if (Buffer.byteLength(JSON.stringify(fitted), 'utf8') <= AUDIT_RECORD_MAX_BYTES) return fitted;
    fitted = {
      ...fitted,
      ...shortened(fitted, 'record_ids', keep),
      ...shortened(fitted, 'created_ids', keep),
      ...shortened(fitted, 'fields', keep),
    };
  }
  if (Buffer.byteLength(JSON.stringify(fitted), 'utf8') <= AUDIT_RECORD_MAX_BYTES) return fitted;
  // Still larger (texts a caller chose, at their bounds): each cut much shorter, so it fits.
  return textsBounded(fitted, 64);
}

/** A caller's text as a record keeps it: at most `max` characters, printable. */
function boundedText(text: string, max: number): string {
  return printable(text, max) ?? '?';
}

/** `record` with the texts a caller or a token chose (database, issuer, subject...) at most `max` characters. */
function textsBounded(record: AuditRecord, max: number): AuditRecord {
  const { actor, erp } = record;
  return {
    ...record,
    actor_id: record.actor_id.slice(0, max * 4),
    ...(record.request_id === undefined ? {} : { request_id: boundedText(record.request_id, max) }),
    actor: {
      ...actor,
      ...(actor.key === undefined ? {} : { key: boundedText(actor.key, max) }),
      ...(actor.oauth === undefined
        ? {}
        : {
            oauth: {
              issuer: boundedText(actor.oauth.issuer, max),
              entry: boundedText(actor.oauth.entry, max),
              ...(actor.oauth.sub === undefined ? {} : { sub: boundedText(actor.oauth.sub, max) }),
              ...(actor.oauth.client_id === undefined
                ? {}
                : { client_id: boundedText(actor.oauth.client_id, max) }),
            },
          }),
    },
    erp: { ...erp, host: boundedText(erp.host, max), db: boundedText(erp.db, max) },
  };
}

/** The codes a step of the gate refuses with (the request, the policy, the key, the confirmation). */
const REFUSAL_CODES: ReadonlySet<number> = new Set([
  PROXY_ERRORS.invalidRequest.code,
  PROXY_ERRORS.missingFunctionName.code,
  PROXY_ERRORS.invalidV2Target.code,
  PROXY_ERRORS.keyPolicyRefused.code,
  PROXY_ERRORS.idempotencyInProgress.code,
  PROXY_ERRORS.idempotencyKeyReused.code,
  PROXY_ERRORS.braked.code,
  -32602,
  -32021,
]);

/** A thrown value's code and what its row says of the call. */
function thrownOf(error: unknown): { code: number; didNotRun: boolean; ran: boolean } {
  if (error instanceof ProxyError) {
    return { code: error.code, didNotRun: error.row.callRan === 'no', ran: error.row.callRan === 'yes' };
  }
  return { code: PROXY_ERRORS.internal.code, didNotRun: false, ran: false };
}

/** The facts a call's audit adds to its log line and metrics. */
export type AuditFacts = Pick<RequestFacts, 'auditId' | 'auditOutcome' | 'auditWriteFailures' | 'auditError'>;

/** One call's record, from the `audit` step on (see the module header). */
export class AuditWriting<T> {
  readonly id: string;
  readonly #opened: number;
  readonly #now: () => number;
  #call: AuditedCall;
  #reachedPending = false;
  #failures = 0;
  /** The ids pointed at with the pending record. */
  #pointed = new Set<number>();
  /** The end's write, started when the run ended (after `audit-pending`). */
  #ending: Promise<AuditFacts> | undefined;
  /** The pending record could not be written: the end is tried once, briefly (the store is likely down). */
  #pendingFailed = false;
  /** Why a write of the record failed (the log line's `audit_error`). */
  #problem: string | undefined;

  constructor(
    readonly subject: AuditSubject<T>,
    call: AuditedCall,
    private readonly deps: AuditDeps,
  ) {
    this.#now = deps.now ?? Date.now;
    this.#opened = this.#now();
    this.id = newAuditId(this.#opened);
    this.#call = call;
  }

  /** The content of the request the record describes, read once (its pending record and its end share it). */
  #content: { readonly request: ErpCall; readonly content: CallContent } | undefined;
  /** The values' HMAC under a key (the pending record's and the end's: megabytes are hashed once). */
  #digest: { readonly content: CallContent; readonly keyId: string; readonly digest: string } | undefined;

  #valuesDigest(key: DigestKey, content: CallContent): string {
    if (this.#digest?.content !== content || this.#digest.keyId !== key.id) {
      this.#digest = { content, keyId: key.id, digest: hmacOf(key, `values\n${content.valuesText}`) };
    }
    return this.#digest.digest;
  }

  #contentOf(request: ErpCall | undefined): CallContent | undefined {
    if (request === undefined) return undefined;
    if (this.#content?.request !== request) this.#content = { request, content: callContent(request) };
    return this.#content.content;
  }

  /** A wait on the store, counted on the call's meter. */
  #timed<W>(work: Promise<W>): Promise<W> {
    return this.subject.storeMeter?.timed(work) ?? work;
  }

  /** The call as the policy step ruled it: its requests are what the record describes. */
  saw(call: AuditedCall): void {
    this.#call = call;
  }

  /** The `audit-pending` step: the record written `pending`, or (with `on`) the call refused. */
  async pending(call: AuditedCall): Promise<void> {
    this.#call = call;
    this.#reachedPending = true;
    try {
      const { store } = this.deps;
      if (store === undefined) throw new Error('no audit store is configured for this function');
      const record = await this.#record({ outcome: 'pending' }, undefined, undefined);
      const expiresAt = auditExpiry(this.#opened, this.deps.retentionDays);
      // The ids it names are pointed at now: a call whose function dies is found by `record=` too.
      const pointers = pointersOf(record, AUDIT_POINTERS_MAX);
      // Both settled before going on: a refusal never leaves a write of its own in flight.
      const [created, pointed] = await this.#timed(
        Promise.allSettled([
          store.create(record, expiresAt),
          pointers.length === 0 ? undefined : store.point(record, pointers, expiresAt),
        ]),
      );
      if (created.status === 'rejected') throw created.reason;
      if (pointed.status === 'rejected') throw pointed.reason;
      this.#pointed = new Set(pointers.map((pointer) => pointer.id));
    } catch (error) {
      this.#failures += 1;
      this.#pendingFailed = true;
      this.#problem = problemOf(error);
      if (this.deps.mode === 'on') throw auditUnavailable(error);
    }
  }

  /** Starts writing the end of a run that passed `audit-pending` (awaited by {@link ended}). */
  ranWith(value: T): void {
    this.#ending = this.#write(this.subject.factsOf(value), undefined, this.subject.createdIds(value));
  }

  /** Starts writing the end of a run that passed `audit-pending` and threw. */
  ranThrowing(error: unknown): void {
    this.#ending = this.#write(factsOf(error), error, undefined);
  }

  /** The `audit` step's end: the record's end written (or the one started awaited), and its facts. */
  ended(value: T): Promise<AuditFacts> {
    return (
      this.#ending ?? this.#write(this.subject.factsOf(value), undefined, this.subject.createdIds(value))
    );
  }

  endedThrowing(error: unknown): Promise<AuditFacts> {
    return this.#ending ?? this.#write(factsOf(error), error, undefined);
  }

  async #write(
    facts: RequestFacts,
    error: unknown,
    created: readonly number[] | undefined,
  ): Promise<AuditFacts> {
    const end = endOf(facts, this.#reachedPending, error === undefined ? undefined : thrownOf(error));
    const { store } = this.deps;
    let written = false;
    try {
      if (store === undefined) throw new Error('no audit store is configured for this function');
      const record = await this.#record(end, facts, created);
      const expiresAt = auditExpiry(this.#opened, this.deps.retentionDays);
      // A refusal points at a few of the ids it named (enough for `record=`): a refused call costs
      // the store little, whatever it names.
      // With `AUDIT=on` and the pending record refused, the call did not run: its end is tried once,
      // briefly, without pointers (the store just failed). Otherwise this is the call's record.
      const quick = this.#pendingFailed && this.deps.mode === 'on';
      const most = end.outcome === 'refused' ? AUDIT_REFUSED_POINTERS : AUDIT_POINTERS_MAX;
      const pointers = quick
        ? []
        : pointersOf(record, most).filter((pointer) => !this.#pointed.has(pointer.id));
      // Both settled before the answer: a frozen function runs nothing after it.
      const [finished, pointed] = await this.#timed(
        Promise.allSettled([
          store.finish(record, expiresAt, { quick }),
          pointers.length === 0 ? undefined : store.point(record, pointers, expiresAt),
        ]),
      );
      if (finished.status === 'fulfilled' && finished.value) written = true;
      else {
        this.#failures += 1;
        this.#problem ??=
          finished.status === 'rejected' ? problemOf(finished.reason) : 'the record had ended already';
      }
      if (pointed.status === 'rejected') {
        this.#failures += 1;
        this.#problem ??= problemOf(pointed.reason);
      }
    } catch (cause) {
      this.#failures += 1;
      this.#problem ??= problemOf(cause);
    }
    return {
      auditId: this.id,
      // Counted (`AuditRecords`) only when its end was written.
      ...(written ? { auditOutcome: end.outcome } : {}),
      ...(this.#failures === 0
        ? {}
        : {
            auditWriteFailures: this.#failures,
            ...(this.#problem === undefined ? {} : { auditError: this.#problem }),
          }),
    };
  }

  async #record(
    end: Ended | { outcome: 'pending' },
    facts: RequestFacts | undefined,
    created: readonly number[] | undefined,
  ): Promise<AuditRecord> {
    const key: DigestKey = await this.deps.digestKey();
    const { subject } = this;
    const { inbound, question } = this.#call;
    const identity = inbound.identity;
    const request = auditedRequest(this.#call.requests);
    const content = this.#contentOf(request);
    const ids = content?.ids === undefined ? undefined : bounded(content.ids);
    const fields = content === undefined || content.fields.length === 0 ? undefined : bounded(content.fields);
    const createdIds = created === undefined ? undefined : bounded(created);
    const policy = inbound.keyPolicy;
    const confirmation = facts?.confirmation;
    const idempotencyKey = subject.idempotencyKey;
    const scope = idempotencyScope(identity);
    const record: AuditRecord = {
      schema: AUDIT_SCHEMA_VERSION,
      audit_id: this.id,
      time: new Date(this.#opened).toISOString(),
      ...(subject.requestId === undefined ? {} : { request_id: subject.requestId }),
      ...(subject.traceId === undefined ? {} : { trace_id: subject.traceId }),
      api: subject.api,
      ...(subject.tool === undefined ? {} : { tool: subject.tool }),
      actor_id: scope,
      actor: {
        ...(identity.kind === 'key'
          ? { key: identity.name }
          : {
              oauth: {
                issuer: identity.issuer,
                ...(identity.subject === undefined ? {} : { sub: identity.subject }),
                ...(identity.clientId === undefined ? {} : { client_id: identity.clientId }),
                entry: identity.entry,
              },
            }),
        ...(subject.client === undefined
          ? {}
          : { client: { ...subject.client, self_reported: true as const } }),
        // The user id is the one the call names (JSON-2 does not read it); the key's HMAC says
        // which key it really was.
        ...(subject.erp.uid === undefined ? {} : { erp_user: subject.erp.uid }),
        erp_key_digest: hmacOf(key, `erp-key\n${subject.erp.apiKey}`),
      },
      erp: {
        host: hostOfUrl(subject.erp.url),
        db: subject.erp.db,
        scheme: subject.erp.url.protocol === 'https:' ? 'https' : 'http',
        ...(subject.erp.url.port === '' ? {} : { port: Number(subject.erp.url.port) }),
        ...(facts?.upstreamProtocol === undefined ? {} : { protocol: facts.upstreamProtocol }),
      },
      ...((content?.model ?? question.model) === undefined
        ? {}
        : { model: content?.model ?? question.model }),
      ...((content?.method ?? question.method) === undefined
        ? {}
        : { method: content?.method ?? question.method }),
      ...(ids === undefined || content?.ids === undefined
        ? {}
        : {
            record_ids: ids.items,
            ...((content.idsCount ?? 0) > ids.items.length ? { record_ids_count: content.idsCount } : {}),
            record_ids_digest: hmacOf(key, `ids\n${JSON.stringify(content.ids)}`),
          }),
      ...(createdIds === undefined
        ? {}
        : {
            created_ids: createdIds.items,
            ...(createdIds.count === undefined ? {} : { created_ids_count: createdIds.count }),
          }),
      ...(fields === undefined
        ? {}
        : { fields: fields.items, ...(fields.count === undefined ? {} : { fields_count: fields.count }) }),
      ...(content === undefined ? {} : { values_digest: this.#valuesDigest(key, content) }),
      digest_key_id: key.id,
      ...(policy === undefined
        ? {}
        : {
            policy: {
              name: identity.kind === 'key' ? identity.name : identity.entry,
              digest: policy.digest ?? 'unknown',
            },
          }),
      ...(confirmation === undefined
        ? {}
        : {
            confirmation: {
              answer: confirmation,
              ...(facts?.confirmationId === undefined ? {} : { id: facts.confirmationId }),
              // Keyed: the form shows the values, so its plain hash could be checked against guesses.
              ...(facts?.formDigest === undefined
                ? {}
                : { form_digest: hmacOf(key, `form\n${facts.formDigest}`) }),
            },
          }),
      ...(idempotencyKey === undefined
        ? {}
        : {
            idempotency: {
              key_digest: hmacOf(key, `idempotency-key\n${scope}\n${idempotencyKey}`),
              did: keyDid(facts?.idempotency),
            },
          }),
      ...(facts?.auditReplayOf === undefined ? {} : { replay_of: facts.auditReplayOf }),
      outcome: end.outcome,
      ...('error' in end && end.error !== undefined ? { error: end.error } : {}),
      ...(end.outcome === 'pending' ? {} : { duration_ms: Math.max(0, this.#now() - this.#opened) }),
    };
    // The texts a caller chose are bounded first (a v1 `db` has no length limit of its own).
    return fittedRecord(textsBounded(record, AUDIT_TEXT_MAX));
  }
}

/** The audit's dependencies from their parts: {@link AuditDeps.open} opens records with them. */
export function auditDeps(parts: Omit<AuditDeps, 'open'>): AuditDeps {
  const deps: AuditDeps = {
    ...parts,
    open: (subject, call) => new AuditWriting(subject, call, deps),
  };
  return deps;
}
