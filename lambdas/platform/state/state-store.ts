/**
 * @module platform/state/state-store
 * The proxy's one piece of memory (docs/design.md, "The proxy's state: the store"): the
 * port both of its users talk to, idempotency records (`core/idempotency.ts`) and the limits'
 * counters and in-flight slots. Its two implementations: the DynamoDB table of the stack
 * (`state-store-dynamodb.ts`, loaded on the first call that needs it) and an embedded in-process
 * store for `npm start` (`state-store-embedded.ts`: one process; records lost on restart);
 * `state-store-choice.ts` picks one from the configuration.
 *
 * Every operation is one conditional write (or none): the conditions carry the expiry, because
 * DynamoDB's TTL deletes an expired item only eventually (usually within days), so an item past its
 * expiry is treated as absent by every condition and every read, in both implementations.
 *
 * The store knows no HTTP, no envelope and no caller: its keys are opaque strings the core builds
 * (a hash, never a proxy key), its answers opaque bytes.
 */
/**
 * The store could not answer (unreachable, slow, throttled, full): nothing is known of what it did
 * with the request. The core answers a call with an `Idempotency-Key` -32004 for it.
 */
export class StoreUnavailableError extends Error {
  override readonly name: string = 'StoreUnavailableError';
}

/**
 * The embedded store has no room for another idempotency record: the caller's share of the
 * records' room is full (`forCaller`), or the whole room is. Never thrown for a counter or a slot.
 */
export class StoreFullError extends StoreUnavailableError {
  override readonly name = 'StoreFullError';
  constructor(
    message: string,
    /** Whether the caller's own share is full (another caller may still write). */
    readonly forCaller: boolean,
  ) {
    super(message);
  }
}

/** What an idempotency record says of its attempt. */
export type AttemptState = 'in-progress' | 'done';

/** An idempotency record as the store keeps it. */
export interface IdempotencyRecord {
  readonly state: AttemptState;
  /** The request's fingerprint (a hash: `core/idempotency.ts`). */
  readonly fingerprint: string;
  /** The attempt's own token: only the attempt that wrote the record may complete or delete it. */
  readonly token: string;
  /** In progress: the epoch ms until which the attempt may still be running (the function's timeout). */
  readonly leaseUntil: number;
  /** The epoch second after which the record no longer exists (DynamoDB's TTL attribute). */
  readonly expiresAt: number;
  /** Done: the stored answer, as the core encoded it. */
  readonly answer?: Uint8Array;
  /**
   * In progress: whether the attempt marked itself about to reach the ERP ({@link
   * StateStore.markSent}); `false`: a claim whose call certainly did not run. `undefined`: a record
   * written before the mark existed, taken as sent (it may have run).
   */
  readonly sent?: boolean;
  /** The audit record of the attempt's call (docs/guide/audit.md): a replay's record names it. */
  readonly auditId?: string;
}

/** A new attempt: the record written, in progress, when no live record has its key. */
export interface AttemptStart {
  readonly key: string;
  /**
   * Whose record it is, as an opaque hash of the caller (the idempotency scope): the embedded
   * store gives each owner a share of its records' room; the table ignores it.
   */
  readonly owner: string;
  readonly fingerprint: string;
  readonly token: string;
  readonly leaseUntil: number;
  readonly expiresAt: number;
  /** The audit record of the call (kept with the record). */
  readonly auditId?: string;
}

export type AttemptBegun =
  | { readonly begun: true }
  | { readonly begun: false; readonly existing: IdempotencyRecord };

/** One request counted against one limit in one window. */
export interface CounterStep {
  /** The counter's key: the limit and its window (the core builds it, e.g. `<scope>#<window start>`). */
  readonly key: string;
  /** Counts only while the count is below it. */
  readonly limit: number;
  /** The epoch second after which the counter no longer exists (the window's end). */
  readonly expiresAt: number;
}

export interface CounterResult {
  /** Whether this request was counted (the count was below the limit). */
  readonly counted: boolean;
  /** The count after this request (counted), or as it stands (refused). */
  readonly count: number;
}

/** One in-flight slot asked for: slot `slot` of `key`, leased to `token` until `leaseUntil`. */
export interface SlotLease {
  readonly key: string;
  readonly slot: number;
  readonly token: string;
  /** Epoch ms; a slot whose lease has passed is free (its holder died or overran). */
  readonly leaseUntil: number;
}

/**
 * The store port. `now` is the caller's clock (epoch ms), so both implementations and the tests
 * judge expiry by the same time.
 */
export interface StateStore {
  /** `dynamodb` (a table) or `embedded` (this process). */
  readonly kind: 'dynamodb' | 'embedded';
  /** Largest answer {@link completeAttempt} takes (DynamoDB's item limit, less the record's other attributes). */
  readonly maxAnswerBytes: number;

  /**
   * Writes `attempt` as an in-progress record, not sent, when its key has no live record, or when
   * its live record is an in-progress claim of the same fingerprint whose lease has passed and that
   * was never marked sent (its call certainly did not run: the new attempt takes it over);
   * otherwise changes nothing and
   * returns the live record. One conditional write.
   */
  beginAttempt(attempt: AttemptStart, now: number): Promise<AttemptBegun>;
  /**
   * Marks the attempt's in-progress record as about to reach the ERP, when it is still the
   * attempt's own (`token`): from then on the call may have run. Returns whether it was. One
   * conditional write.
   */
  markSent(key: string, token: string): Promise<boolean>;
  /**
   * Marks the attempt done with its answer, kept until `expiresAt` (epoch s), when the record
   * is still the attempt's own (`token`). Returns whether it was. One conditional write.
   */
  completeAttempt(key: string, token: string, answer: Uint8Array, expiresAt: number): Promise<boolean>;
  /** Deletes the record when it is still the attempt's own (`token`). One conditional write. */
  abandonAttempt(key: string, token: string): Promise<boolean>;

  /** Counts one request when the counter is below its limit. One conditional write. */
  countRequest(step: CounterStep, now: number): Promise<CounterResult>;
  /**
   * Takes back one request {@link countRequest} counted (a call another limit then refused does
   * not count): the counter goes down by one while it is above 0. One conditional write.
   */
  uncountRequest(key: string, now: number): Promise<boolean>;
  /** Takes the slot when it is free or its lease has passed. One conditional write. */
  acquireSlot(lease: SlotLease, now: number): Promise<boolean>;
  /** Frees the slot when it is still leased to `token`. One conditional write. */
  releaseSlot(key: string, slot: number, token: string): Promise<boolean>;

  /**
   * Marks `key` used until `expiresAt` (epoch s) unless a live mark has it already: whether this
   * call made the mark (a confirmation's nonce, used once: core/confirm/). One conditional write.
   */
  markOnce(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/** The table's partition key (a string); every item's key starts with its kind's prefix. */
export const PARTITION_KEY = 'pk';
/** The TTL attribute (epoch seconds): the stack enables the table's TTL on it. */
export const TTL_ATTRIBUTE = 'expires_at';
/**
 * The DynamoDB operations the store makes: the stack grants the functions exactly these
 * (`dynamodb:<Operation>` on the table), so a new operation here is a new grant there.
 */
export const STORE_OPERATIONS = Object.freeze(['PutItem', 'UpdateItem', 'DeleteItem'] as const);
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/** DynamoDB's item limit is 400 KB; the record's other attributes take well under 2 KB. */
export const MAX_STORED_ANSWER_BYTES = 398 * 1024;

/**
 * The embedded store's room for idempotency records (`LOCAL_STORE_MAX_BYTES`,
 * `LOCAL_STORE_MAX_RECORDS`; counters and slots have room of their own, never refused) and each
 * caller's share of it: a quarter, so one caller filling its share leaves three quarters to the
 * others.
 */
export const EMBEDDED_STORE_ROOM = Object.freeze({
  maxBytes: 64 * 1024 * 1024,
  maxRecords: 50_000,
  /** A caller holds at most `1 / callerShareDivisor` of either. */
  callerShareDivisor: 4,
});

/**
 * The item kinds of the one table, as the prefixes of their partition keys. `check#` is reserved
 * for the deploy's table check (`table-write-check.ts`), whose item lives for seconds.
 */
export const STORE_KEY_PREFIX = Object.freeze({
  attempt: 'idem#',
  counter: 'rate#',
  slot: 'slot#',
  once: 'once#',
  check: 'check#',
  /** The operators' brakes: one item (platform/brakes/brakes-store.ts). */
  brakes: 'brakes#',
});

/** The partition key of a slot. */
export function slotKey(key: string, slot: number): string {
  return `${STORE_KEY_PREFIX.slot}${key}#${slot}`;
}
