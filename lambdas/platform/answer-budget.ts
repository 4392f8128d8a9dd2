/**
 * @module platform/answer-budget
 * A bound on the ERP answers one process holds in memory at once (README, "Limits"). On Lambda a
 * process serves one invocation at a time and the function's memory is the bound. The local
 * server runs many invocations at once: 30 concurrent 29 MiB gzip answers took it to 1 GB of
 * RSS, which the allocator then kept. So the local server gives each invocation a lease on one
 * shared budget, and the HTTP client reserves every answer's bytes on the lease of the
 * invocation it runs in, which travels as a value (see {@link WithAnswerLease}). A lease gives
 * its bytes back when its invocation ends.
 *
 * An answer that does not fit is refused (-32009), never waited for: a call that waits for memory
 * while holding some can starve the others. One invocation alone always fits, whatever its size,
 * and so do an invocation's first {@link SMALL_ANSWER_BYTES}: the ERP has run the call by the
 * time its answer arrives, and a write's answer (an id, `true`) is never the one to refuse.
 */

/**
 * The answer bytes an invocation may always hold, whatever the others hold: the bound may be
 * passed by this much per invocation in progress.
 */
export const SMALL_ANSWER_BYTES = 64 * 1024;

/** The bytes of ERP answers the process may hold at once, shared by the invocations' leases. */
export class AnswerBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes currently reserved by all leases. */
  get heldBytes(): number {
    return this.held;
  }

  /** A lease for one invocation. */
  lease(): AnswerLease {
    return new AnswerLease(this);
  }

  /** @internal Reserves `bytes` when they fit, when nothing else is held, or when the caller's are small. */
  take(bytes: number, heldByCaller: number): boolean {
    const others = this.held - heldByCaller;
    const small = heldByCaller + bytes <= SMALL_ANSWER_BYTES;
    if (!small && others > 0 && this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  /** @internal */
  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/** One invocation's share of an {@link AnswerBudget}. */
export class AnswerLease {
  private held = 0;
  private released = false;

  constructor(readonly budget: AnswerBudget) {}

  /** Reserves `bytes` of answer; `false` when they do not fit beside the other invocations'. */
  reserve(bytes: number): boolean {
    if (this.released) return true;
    if (!this.budget.take(bytes, this.held)) return false;
    this.held += bytes;
    return true;
  }

  /** Bytes this lease holds. */
  get heldBytes(): number {
    return this.held;
  }

  /** Gives every byte back (the invocation ended); later reservations are not counted. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.held);
    this.held = 0;
  }
}

/**
 * Where an invocation's lease travels: the local server puts it on the Lambda-like context it
 * hands the handler, the edge copies it into the inbound call, and the core passes it with each
 * upstream request (no lease on Lambda: one invocation per process, nothing to share).
 */
export interface WithAnswerLease {
  readonly answerLease?: AnswerLease;
}
