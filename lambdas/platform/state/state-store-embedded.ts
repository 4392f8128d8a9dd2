/**
 * @module platform/state/state-store-embedded
 * The embedded store of a local run (`npm start`): the store port (`platform/state/state-store.ts`) over
 * a `Map` in this process, with the same conditions as the DynamoDB table. One process only;
 * records are lost on restart (README, "Retrying writes safely").
 */
import {
  type AttemptBegun,
  type AttemptStart,
  type CounterResult,
  type CounterStep,
  type IdempotencyRecord,
  MAX_STORED_ANSWER_BYTES,
  type SlotLease,
  STORE_KEY_PREFIX,
  type StateStore,
  StoreUnavailableError,
  slotKey,
} from './state-store.ts';

const nowSeconds = (now: number): number => Math.floor(now / 1000);

interface EmbeddedEntry {
  readonly expiresAt: number;
  record?: IdempotencyRecord;
  count?: number;
  lease?: { readonly token: string; readonly leaseUntil: number };
}

/**
 * The embedded store: a `Map` in this process, with the same conditions as the table. Its size
 * is bounded: expired entries are dropped when it is full, and a write that still finds it full
 * fails as an unavailable store would (the caller answers -32004), rather than growing without end.
 */
export class EmbeddedStateStore implements StateStore {
  readonly kind = 'embedded';
  readonly maxAnswerBytes = MAX_STORED_ANSWER_BYTES;
  readonly #entries = new Map<string, EmbeddedEntry>();
  readonly #maxEntries: number;

  constructor(options: { readonly maxEntries?: number } = {}) {
    this.#maxEntries = options.maxEntries ?? 50_000;
  }

  #live(key: string, now: number): EmbeddedEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt < nowSeconds(now)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #put(key: string, entry: EmbeddedEntry, now: number): void {
    if (!this.#entries.has(key) && this.#entries.size >= this.#maxEntries) {
      for (const [k, e] of this.#entries) if (e.expiresAt < nowSeconds(now)) this.#entries.delete(k);
      if (this.#entries.size >= this.#maxEntries) {
        throw new StoreUnavailableError(`the embedded store is full (${this.#maxEntries} entries)`);
      }
    }
    this.#entries.set(key, entry);
  }

  async beginAttempt(attempt: AttemptStart, now: number): Promise<AttemptBegun> {
    const key = STORE_KEY_PREFIX.attempt + attempt.key;
    const existing = this.#live(key, now)?.record;
    if (existing) return { begun: false, existing };
    const record: IdempotencyRecord = {
      state: 'in-progress',
      fingerprint: attempt.fingerprint,
      token: attempt.token,
      leaseUntil: attempt.leaseUntil,
      expiresAt: attempt.expiresAt,
    };
    this.#put(key, { expiresAt: attempt.expiresAt, record }, now);
    return { begun: true };
  }

  async completeAttempt(key: string, token: string, answer: Uint8Array, expiresAt: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.attempt + key;
    const record = this.#entries.get(full)?.record;
    if (record?.token !== token) return false;
    if (answer.byteLength > this.maxAnswerBytes) {
      throw new RangeError(`answer of ${answer.byteLength} bytes is over the store's limit`);
    }
    this.#entries.set(full, {
      expiresAt,
      record: { ...record, state: 'done', answer: Uint8Array.from(answer), expiresAt },
    });
    return true;
  }

  async abandonAttempt(key: string, token: string): Promise<boolean> {
    const full = STORE_KEY_PREFIX.attempt + key;
    if (this.#entries.get(full)?.record?.token !== token) return false;
    this.#entries.delete(full);
    return true;
  }

  async countRequest(step: CounterStep, now: number): Promise<CounterResult> {
    const key = STORE_KEY_PREFIX.counter + step.key;
    const count = this.#live(key, now)?.count ?? 0;
    if (count >= step.limit) return { counted: false, count };
    this.#put(key, { expiresAt: step.expiresAt, count: count + 1 }, now);
    return { counted: true, count: count + 1 };
  }

  async uncountRequest(key: string, now: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.counter + key;
    const entry = this.#live(full, now);
    if (entry?.count === undefined || entry.count <= 0) return false;
    this.#entries.set(full, { ...entry, count: entry.count - 1 });
    return true;
  }

  async acquireSlot(lease: SlotLease, now: number): Promise<boolean> {
    const key = slotKey(lease.key, lease.slot);
    const held = this.#live(key, now)?.lease;
    if (held && held.leaseUntil >= now) return false;
    this.#put(
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
    if (this.#entries.get(full)?.lease?.token !== token) return false;
    this.#entries.delete(full);
    return true;
  }

  async markOnce(key: string, expiresAt: number, now: number): Promise<boolean> {
    const full = STORE_KEY_PREFIX.once + key;
    if (this.#live(full, now) !== undefined) return false;
    this.#put(full, { expiresAt }, now);
    return true;
  }
}
