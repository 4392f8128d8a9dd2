/**
 * @module platform/state/state-store-embedded
 * The embedded store of a local run (`npm start`): the store port (`platform/state/state-store.ts`)
 * in this process, with the same conditions as the DynamoDB table. One process only; records are
 * lost on restart (README, "Retrying writes safely").
 *
 * No caller can fill it so that another is refused or a limit stops holding (docs/design.md, "The
 * proxy's state"):
 * - idempotency records and the limits' counters and slots have separate rooms: a counter or a
 *   slot is never refused for lack of room (their number is bounded by the configuration: keys,
 *   people and ERPs with limits; expired ones are dropped as the map grows);
 * - the records' room is bounded in bytes (each record's answer and keys, plus a fixed overhead)
 *   and in entries, and each caller (`AttemptStart.owner`) holds at most a share of either;
 * - a write that does not fit first drops expired records; a live record is never evicted (a retry
 *   would run its write again); a record that still does not fit is refused with a
 *   {@link StoreFullError} (-32004, "full for this caller").
 *
 * An attempt in progress holds room for the largest answer it may keep, so completing it never
 * needs room the store does not have.
 */
import {
  type AttemptBegun,
  type AttemptStart,
  type CounterResult,
  type CounterStep,
  EMBEDDED_STORE_ROOM,
  type IdempotencyRecord,
  MAX_STORED_ANSWER_BYTES,
  type SlotLease,
  STORE_KEY_PREFIX,
  type StateStore,
  StoreFullError,
  slotKey,
} from './state-store.ts';

const nowSeconds = (now: number): number => Math.floor(now / 1000);

/**
 * What a record costs besides its strings and answer: the `Map` entry, the objects, the string and
 * array headers (measured on Node 20, with room to spare: test/unit/state-store-embedded.test.ts).
 */
export const RECORD_OVERHEAD_BYTES = 1536;

export interface EmbeddedStoreOptions {
  /** The records' room in bytes (`LOCAL_STORE_MAX_BYTES`). */
  readonly maxBytes?: number;
  /** The records' room in entries (`LOCAL_STORE_MAX_RECORDS`). */
  readonly maxRecords?: number;
}

interface RecordEntry {
  readonly record: IdempotencyRecord;
  readonly owner: string;
  /** What the record counts against its owner's share and the room. */
  readonly bytes: number;
}

interface LimitEntry {
  readonly expiresAt: number;
  readonly count?: number;
  readonly lease?: { readonly token: string; readonly leaseUntil: number };
}

interface Usage {
  bytes: number;
  records: number;
}

/** The bytes a record counts: in progress, room for the largest answer it may keep. */
function recordBytes(key: string, record: IdempotencyRecord): number {
  const strings = key.length + record.fingerprint.length + record.token.length;
  const answer = record.state === 'done' ? (record.answer?.byteLength ?? 0) : MAX_STORED_ANSWER_BYTES;
  return RECORD_OVERHEAD_BYTES + 2 * strings + answer;
}

/** Fewest counters and slots before the first sweep of expired ones. */
const FIRST_LIMITS_SWEEP = 1024;

export class EmbeddedStateStore implements StateStore {
  readonly kind = 'embedded';
  readonly maxAnswerBytes = MAX_STORED_ANSWER_BYTES;
  readonly #records = new Map<string, RecordEntry>();
  readonly #limits = new Map<string, LimitEntry>();
  readonly #usage = new Map<string, Usage>();
  readonly #total: Usage = { bytes: 0, records: 0 };
  readonly #room: { readonly bytes: number; readonly records: number };
  readonly #share: { readonly bytes: number; readonly records: number };
  /** The second of the last sweep of expired records: a later one in the same second finds none. */
  #sweptAt = -1;
  #limitsSweepAt = FIRST_LIMITS_SWEEP;

  constructor(options: EmbeddedStoreOptions = {}) {
    const bytes = options.maxBytes ?? EMBEDDED_STORE_ROOM.maxBytes;
    const records = options.maxRecords ?? EMBEDDED_STORE_ROOM.maxRecords;
    const divisor = EMBEDDED_STORE_ROOM.callerShareDivisor;
    this.#room = { bytes, records };
    this.#share = {
      bytes: Math.floor(bytes / divisor),
      records: Math.max(1, Math.floor(records / divisor)),
    };
  }

  /** The bytes and records the store holds (all callers), as it counts them against its room. */
  get recordsHeld(): { readonly bytes: number; readonly records: number } {
    return { ...this.#total };
  }

  /** How many counters and slots the store holds (expired ones included until swept). */
  get limitsHeld(): number {
    return this.#limits.size;
  }

  #account(owner: string, bytes: number, records: number): void {
    const usage = this.#usage.get(owner) ?? { bytes: 0, records: 0 };
    usage.bytes += bytes;
    usage.records += records;
    this.#total.bytes += bytes;
    this.#total.records += records;
    if (usage.records === 0) this.#usage.delete(owner);
    else this.#usage.set(owner, usage);
  }

  #setRecord(key: string, entry: RecordEntry): void {
    const old = this.#records.get(key);
    if (old !== undefined) this.#account(old.owner, -old.bytes, -1);
    this.#records.set(key, entry);
    this.#account(entry.owner, entry.bytes, 1);
  }

  #dropRecord(key: string, entry: RecordEntry): void {
    this.#records.delete(key);
    this.#account(entry.owner, -entry.bytes, -1);
  }

  #liveRecord(key: string, now: number): RecordEntry | undefined {
    const entry = this.#records.get(key);
    if (entry === undefined || entry.record.expiresAt >= nowSeconds(now)) return entry;
    this.#dropRecord(key, entry);
    return undefined;
  }

  /** Which room `bytes` more for `owner` would overflow: the owner's share, the whole room, or none. */
  #overflow(owner: string, bytes: number): 'share' | 'room' | undefined {
    const usage = this.#usage.get(owner) ?? { bytes: 0, records: 0 };
    if (usage.bytes + bytes > this.#share.bytes || usage.records + 1 > this.#share.records) return 'share';
    const total = this.#total;
    if (total.bytes + bytes > this.#room.bytes || total.records + 1 > this.#room.records) return 'room';
    return undefined;
  }

  /** Room for a new record of `owner`: expired records dropped first; a live one never. */
  #makeRoom(owner: string, bytes: number, now: number): void {
    if (this.#overflow(owner, bytes) === undefined) return;
    const second = nowSeconds(now);
    if (this.#sweptAt !== second) {
      this.#sweptAt = second;
      for (const [key, entry] of this.#records) {
        if (entry.record.expiresAt < second) this.#dropRecord(key, entry);
      }
    }
    const overflow = this.#overflow(owner, bytes);
    if (overflow === undefined) return;
    throw new StoreFullError(
      overflow === 'share'
        ? `the local idempotency store is full for this caller (a caller holds at most ${this.#share.records} records or ${this.#share.bytes} bytes)`
        : `the local idempotency store is full (${this.#room.records} records or ${this.#room.bytes} bytes)`,
      overflow === 'share',
    );
  }

  /** Counters and slots: never refused; expired ones dropped each time the map has doubled. */
  #putLimit(key: string, entry: LimitEntry, now: number): void {
    this.#limits.set(key, entry);
    if (this.#limits.size < this.#limitsSweepAt) return;
    const second = nowSeconds(now);
    for (const [k, e] of this.#limits) if (e.expiresAt < second) this.#limits.delete(k);
    this.#limitsSweepAt = Math.max(FIRST_LIMITS_SWEEP, 2 * this.#limits.size);
  }

  #liveLimit(key: string, now: number): LimitEntry | undefined {
    const entry = this.#limits.get(key);
    if (entry === undefined || entry.expiresAt >= nowSeconds(now)) return entry;
    this.#limits.delete(key);
    return undefined;
  }

  async beginAttempt(attempt: AttemptStart, now: number): Promise<AttemptBegun> {
    const key = STORE_KEY_PREFIX.attempt + attempt.key;
    const live = this.#liveRecord(key, now);
    const existing = live?.record;
    // A claim of the same request never marked sent whose lease has passed did not run: taken over.
    const unsent =
      existing?.state === 'in-progress' &&
      existing.sent === false &&
      existing.leaseUntil < now &&
      existing.fingerprint === attempt.fingerprint;
    if (existing && !unsent) return { begun: false, existing };
    if (live !== undefined) this.#dropRecord(key, live);
    const record: IdempotencyRecord = {
      state: 'in-progress',
      fingerprint: attempt.fingerprint,
      token: attempt.token,
      leaseUntil: attempt.leaseUntil,
      expiresAt: attempt.expiresAt,
      sent: false,
      ...(attempt.auditId === undefined ? {} : { auditId: attempt.auditId }),
    };
    const bytes = recordBytes(key, record);
    this.#makeRoom(attempt.owner, bytes, now);
    this.#setRecord(key, { record, owner: attempt.owner, bytes });
    return { begun: true };
  }

  async completeAttempt(key: string, token: string, answer: Uint8Array, expiresAt: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.attempt + key;
    const entry = this.#records.get(full);
    if (entry?.record.token !== token) return false;
    if (answer.byteLength > this.maxAnswerBytes) {
      throw new RangeError(`answer of ${answer.byteLength} bytes is over the store's limit`);
    }
    // Never more than the room the attempt held since it began: it always fits.
    const record: IdempotencyRecord = {
      ...entry.record,
      state: 'done',
      answer: Uint8Array.from(answer),
      expiresAt,
    };
    this.#setRecord(full, { record, owner: entry.owner, bytes: recordBytes(full, record) });
    return true;
  }

  async markSent(key: string, token: string): Promise<boolean> {
    const full = STORE_KEY_PREFIX.attempt + key;
    const entry = this.#records.get(full);
    if (entry?.record.token !== token || entry.record.state !== 'in-progress') return false;
    this.#records.set(full, { ...entry, record: { ...entry.record, sent: true } });
    return true;
  }

  async abandonAttempt(key: string, token: string): Promise<boolean> {
    const full = STORE_KEY_PREFIX.attempt + key;
    const entry = this.#records.get(full);
    if (entry?.record.token !== token) return false;
    this.#dropRecord(full, entry);
    return true;
  }

  async countRequest(step: CounterStep, now: number): Promise<CounterResult> {
    const key = STORE_KEY_PREFIX.counter + step.key;
    const count = this.#liveLimit(key, now)?.count ?? 0;
    if (count >= step.limit) return { counted: false, count };
    this.#putLimit(key, { expiresAt: step.expiresAt, count: count + 1 }, now);
    return { counted: true, count: count + 1 };
  }

  async uncountRequest(key: string, now: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.counter + key;
    const entry = this.#liveLimit(full, now);
    if (entry?.count === undefined || entry.count <= 0) return false;
    this.#limits.set(full, { ...entry, count: entry.count - 1 });
    return true;
  }

  async acquireSlot(lease: SlotLease, now: number): Promise<boolean> {
    const key = slotKey(lease.key, lease.slot);
    const held = this.#liveLimit(key, now)?.lease;
    if (held && held.leaseUntil >= now) return false;
    this.#putLimit(
      key,
      {
        expiresAt: Math.ceil(lease.leaseUntil / 1000),
        lease: { token: lease.token, leaseUntil: lease.leaseUntil },
      },
      now,
    );
    return true;
  }

  async releaseSlot(key: string, slot: number, token: string): Promise<boolean> {
    const full = slotKey(key, slot);
    if (this.#limits.get(full)?.lease?.token !== token) return false;
    this.#limits.delete(full);
    return true;
  }

  async markOnce(key: string, expiresAt: number, now: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.once + key;
    // Kept with the counters and slots: short-lived, swept like them (at most `CONFIRM_TTL`).
    if (this.#liveLimit(full, now) !== undefined) return false;
    this.#putLimit(full, { expiresAt }, now);
    return true;
  }
}
