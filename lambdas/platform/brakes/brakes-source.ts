/**
 * @module platform/brakes/brakes-source
 * An instance's copy of the brakes (docs/design.md, "Brakes"): read with one strongly consistent
 * read of the store when the copy is older than `BRAKES_REFRESH`, by the first call that finds it so
 * (a frozen Lambda runs no timer), with a short time limit of its own; every call started meanwhile
 * waits for that one read. A brake set at T is so applied to every call an instance starts after
 * T + `BRAKES_REFRESH`: the copy's age counts from the moment its read was sent.
 *
 * A call whose copy is fresh pays no store work and no promise ({@link BrakesSource.fresh}).
 *
 * The store cannot be read (down, slow, a damaged item): the instance keeps the brakes it last
 * read; one that never read them serves without any (fail open). Either way the failure is
 * reported ({@link BrakesReadFailure}: logged, counted, alarmed) and the next read waits another
 * interval, so a store that is down costs each instance one slow call per interval, not every call.
 */
import { type Brake, NO_BRAKES, type StoredBrakes } from './brakes.ts';

/** Where the brakes are kept: one item of the state store (platform/brakes/brakes-store*.ts). */
export interface BrakesStore {
  /** The brakes and their version, read strongly consistent; {@link NO_BRAKES} when never written. */
  read(): Promise<StoredBrakes>;
  /**
   * Writes `brakes` as version `expected + 1` when the item is still at version `expected`
   * (0: never written). Whether it was; `false`: another write came first (read again).
   */
  write(brakes: readonly Brake[], expected: number): Promise<boolean>;
}

/** A read of the brakes that failed: what the instance does now. */
export interface BrakesReadFailure {
  readonly error: unknown;
  /** `last`: it keeps the brakes it last read; `none`: it never read any and serves without (fail open). */
  readonly kept: 'last' | 'none';
}

/** An instance's copy of the brakes. */
export interface BrakesSource {
  /** The copy when it is fresh at `now` (epoch ms); `undefined`: it must be read ({@link read}). */
  fresh(now: number): readonly Brake[] | undefined;
  /** The brakes after a read (one at a time: calls that find the copy old share it). Never rejects. */
  read(now: number): Promise<readonly Brake[]>;
  /** The brakes at `now`: the fresh copy, or a read. */
  current(now: number): readonly Brake[] | Promise<readonly Brake[]>;
}

export interface BrakesSourceOptions {
  readonly store: BrakesStore;
  /** `BRAKES_REFRESH`, in milliseconds. */
  readonly refreshMs: number;
  /** How long a read may take before the copy is kept as it is; at most half the refresh. */
  readonly readTimeoutMs?: number;
  readonly onReadFailure?: (failure: BrakesReadFailure) => void;
}

/** A read's own time limit: short, since every call an instance starts meanwhile waits for it. */
export const BRAKES_READ_TIMEOUT_MS = 1_000;

class BrakesReadTimeout extends Error {
  override readonly name = 'BrakesReadTimeout';
}

/** The copy of one instance over `store`. */
export function createBrakesSource(options: BrakesSourceOptions): BrakesSource {
  const { store, refreshMs, onReadFailure } = options;
  // Below the refresh, so a read in flight is never older than the interval a call may wait on.
  const timeoutMs = Math.min(options.readTimeoutMs ?? BRAKES_READ_TIMEOUT_MS, Math.max(1, refreshMs / 2));
  let copy: readonly Brake[] | undefined;
  /** When the read the copy came from was sent (epoch ms): the copy's age counts from then. */
  let copySent = Number.NEGATIVE_INFINITY;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<readonly Brake[]> | undefined;

  const fresh = (now: number): readonly Brake[] | undefined =>
    now - readAt < refreshMs ? (copy ?? NO_BRAKES.brakes) : undefined;

  /** Takes a read's answer, unless a newer read's answer came first (an answer late past its time limit too). */
  const adopt = (stored: StoredBrakes, sent: number): readonly Brake[] => {
    if (sent >= copySent) {
      copy = stored.brakes;
      copySent = sent;
    }
    return copy ?? NO_BRAKES.brakes;
  };

  const failed = (error: unknown): readonly Brake[] => {
    try {
      onReadFailure?.({ error, kept: copy === undefined ? 'none' : 'last' });
    } catch {
      // A report that fails must not turn a kept copy into a failed call.
    }
    return copy ?? NO_BRAKES.brakes;
  };

  const read = (now: number): Promise<readonly Brake[]> => {
    if (reading !== undefined) return reading;
    const sent = now;
    // Asked in a promise, so a store that throws at once is a failed read like any other.
    const answer = Promise.resolve().then(() => store.read());
    // A late answer is still taken when it comes: it is no older than this read's sending.
    answer.then((stored) => adopt(stored, sent)).catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BrakesReadTimeout(`the brakes were not read within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    reading = Promise.race([answer, limit])
      .then((stored) => adopt(stored, sent), failed)
      .finally(() => {
        clearTimeout(timer);
        // The next read waits an interval from this one's sending, whatever its end.
        readAt = sent;
        reading = undefined;
      });
    return reading;
  };

  return {
    fresh,
    read,
    current: (now) => fresh(now) ?? read(now),
  };
}
