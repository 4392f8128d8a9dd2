/**
 * @module core/confirm/step
 * The gate's `confirmation` step (core/gate.ts; docs/design.md, "The order of checks"), between the idempotency
 * lookup and the limits, for a call that needs a person's confirmation: it ends the call, or hands
 * it on with its run rewritten.
 *
 * - refused (a state that does not fit, a client that cannot be asked) or answered (declined,
 *   cancelled): the call ends here, before the limits; nothing reaches the ERP;
 * - asking: the call goes on through the limits (it reads the ERP for the form's display names, so
 *   it counts as one call) with the form's reads as its run, never the tool's;
 * - accepted: the call goes on through the limits, and its run first uses the confirmation up (the
 *   state's nonce, once, in the state store: core/confirm/decide.ts), right before the ERP call, so
 *   a call a limit refuses does not use it up; a state already used ends it refused.
 *
 * An idempotency record is never made of an asking round, an answer or a refusal (the call's
 * keeping forgets them: core/mcp/run-tool.ts); a replay comes from the lookup, before this step,
 * and never asks.
 */
import type { PinnedErp } from '../call-context.ts';
import type { Confirmation } from './decide.ts';

/** What ended a call at the confirmation step: a refusal, or the person's no. */
export type ConfirmationEnd = Extract<Confirmation, { kind: 'refused' } | { kind: 'answered' }>;

/** A call's confirmation, in the terms of the call's value `T` (the MCP tool's run). */
export interface ConfirmGate<T> {
  /** The decision (core/confirm/decide.ts): reads the seal key, never the ERP. */
  decide(): Promise<Confirmation>;
  /** The call's value when the step ends it. */
  ended(end: ConfirmationEnd): T;
  /**
   * The asking round's run: the form's reads of the ERP (connecting where the limits pinned the
   * call, if they did), and the input-required value.
   */
  ask(decision: Extract<Confirmation, { kind: 'ask' }>, pinned?: PinnedErp): Promise<T>;
  /** Uses an accepted confirmation up (`false`: already used); throws when the store cannot say. */
  use(decision: Extract<Confirmation, { kind: 'accepted' }>): Promise<boolean>;
  /** The value of the run an accepted confirmation let through (its facts say so, and which confirmation). */
  accepted(value: T, decision: Extract<Confirmation, { kind: 'accepted' }>): T;
  /** What that run threw, naming the confirmation too (its audit record's). */
  acceptedFailure(error: unknown, decision: Extract<Confirmation, { kind: 'accepted' }>): unknown;
}

/** Passes a call the confirmation step applies to (see the module header). */
export async function passConfirmation<
  T,
  C extends {
    readonly run: (pinned?: PinnedErp) => Promise<T>;
    readonly sent?: (() => Promise<void>) | undefined;
  },
  P extends { readonly value: T },
>(confirm: ConfirmGate<T>, call: C, rest: (call: C) => Promise<P>): Promise<P | { readonly value: T }> {
  const decision = await confirm.decide();
  switch (decision.kind) {
    case 'refused':
    case 'answered':
      return { value: confirm.ended(decision) };
    case 'ask':
      // Its run reads the ERP for the form and writes nothing: its record is never marked sent.
      return rest({ ...call, run: (pinned) => confirm.ask(decision, pinned), sent: undefined });
    case 'accepted':
      return rest({
        ...call,
        run: async (pinned) => {
          if (!(await confirm.use(decision))) {
            return confirm.ended({
              kind: 'refused',
              refusal: { kind: 'invalid', why: 'used' },
              outcome: 'invalid',
              confirmation: decision.confirmation,
            });
          }
          let value: T;
          try {
            value = await call.run(pinned);
          } catch (error) {
            throw confirm.acceptedFailure(error, decision);
          }
          return confirm.accepted(value, decision);
        },
      });
  }
}
