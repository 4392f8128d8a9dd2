/**
 * @module core/confirm/decide
 * What the gate's confirmation step does with a call that needs a person's confirmation
 * (docs/guide/confirmations.md; docs/design.md, "The order of checks"): from the call's protocol facts (its revision, the
 * client's declared elicitation, the `requestState` and `inputResponses` it sent back) and the call
 * itself, one {@link Confirmation}:
 *
 * - a legacy-revision client cannot be asked: refused (a tool error naming what it lacks);
 * - a 2026-07-28 request that does not declare form elicitation: refused (-32021);
 * - no state, no answer, an expired state (or one sealed under a key no longer held): ask (a new
 *   round, with a new state);
 * - a state that fails its seal or was sealed for another caller, ERP or arguments: refused
 *   (-32602 naming which);
 * - the person's answer: declined or cancelled end the call; accepted lets it run, once: the
 *   state's nonce is marked used in the state store right before the ERP call
 *   ({@link useConfirmation}), so a call a limit refuses does not use it up.
 */
import { UpstreamUnavailableError } from '../../platform/errors.ts';
import { isJsonObject } from '../../platform/json.ts';
import type { ConfirmationOutcome } from '../../platform/names.ts';
import type { StateStore } from '../../platform/state/state-store.ts';
import type { SealKeyRing } from './keys.ts';
import {
  type ConfirmBinding,
  checkConfirmation,
  confirmationIdOf,
  type SealedConfirmation,
  type StateMismatch,
  sealConfirmation,
} from './state.ts';

/** The `inputRequests` key of the confirmation form. */
export const CONFIRM_INPUT_KEY = 'confirm';

export type { ConfirmationOutcome } from '../../platform/names.ts';

/** What the protocol layer read of the call's request (`tools/call`'s params and `_meta`). */
export interface ConfirmRequest {
  /** `modern`: revision 2026-07-28; `legacy`: a revision that opened with `initialize`. */
  readonly era: 'modern' | 'legacy';
  /** The request declares elicitation in form mode (`{}` or `{"form": {...}}`). */
  readonly formElicitation: boolean;
  readonly requestState: string | undefined;
  /** `params.inputResponses` as sent (checked here). */
  readonly inputResponses: unknown;
}

/** What a confirmation needs of the runtime. */
export interface ConfirmDeps {
  readonly keys: SealKeyRing;
  readonly store: StateStore | undefined;
  /** `CONFIRM_TTL`. */
  readonly ttlSeconds: number;
  /** The clock (epoch ms); tests set it. */
  readonly now?: () => number;
}

/** Why a call that needs a confirmation is refused. */
export type ConfirmRefusal =
  /** -32602: the state or the answer sent back does not fit the call. */
  | { readonly kind: 'invalid'; readonly why: StateMismatch | 'used' | 'answer' }
  /** -32021: a 2026-07-28 request without form elicitation. */
  | { readonly kind: 'capability' }
  /** A tool error: a client on a revision without input requests. */
  | { readonly kind: 'legacy' };

/** What the confirmation step does with a call. */
export type Confirmation =
  | {
      readonly kind: 'refused';
      readonly refusal: ConfirmRefusal;
      readonly outcome: ConfirmationOutcome;
      /** A state used already: the confirmation it was. */
      readonly confirmation?: ConfirmationRef;
    }
  | {
      readonly kind: 'answered';
      readonly outcome: 'declined' | 'cancelled';
      readonly confirmation: ConfirmationRef;
    }
  | {
      readonly kind: 'ask';
      readonly outcome: 'asked' | 'expired';
      /** Seals the new state, bound to the digest of the form shown with it. */
      readonly seal: (formDigest?: string) => SealedConfirmation;
    }
  | {
      readonly kind: 'accepted';
      readonly outcome: 'accepted';
      readonly nonce: string;
      readonly expiresAt: number;
      readonly confirmation: ConfirmationRef;
    };

/** Which confirmation an answer is to, as its audit record names it: its id and its form's digest. */
export interface ConfirmationRef {
  readonly id: string;
  readonly formDigest?: string;
}

/** Whether a client's declared capabilities include elicitation in form mode (an empty object means form). */
export function declaresFormElicitation(capabilities: unknown): boolean {
  if (!isJsonObject(capabilities)) return false;
  const elicitation = capabilities.elicitation;
  if (!isJsonObject(elicitation)) return false;
  return Object.keys(elicitation).length === 0 || isJsonObject(elicitation.form);
}

/** The person's answer in `inputResponses`, or `undefined` when it is not an elicitation result. */
function answerOf(inputResponses: unknown): 'accept' | 'decline' | 'cancel' | undefined {
  if (!isJsonObject(inputResponses)) return undefined;
  const response = inputResponses[CONFIRM_INPUT_KEY];
  if (!isJsonObject(response)) return undefined;
  const { action } = response;
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : undefined;
}

async function ask(
  binding: ConfirmBinding,
  deps: ConfirmDeps,
  outcome: 'asked' | 'expired',
): Promise<Confirmation> {
  const key = await deps.keys.current();
  const now = (deps.now ?? Date.now)();
  return {
    kind: 'ask',
    outcome,
    seal: (formDigest) => sealConfirmation(binding, key, now, deps.ttlSeconds, formDigest),
  };
}

function refused(refusal: ConfirmRefusal): Confirmation {
  return { kind: 'refused', refusal, outcome: 'invalid' };
}

/** The confirmation step's decision for a call that needs a person's confirmation (see the module header). */
export async function decideConfirmation(
  request: ConfirmRequest,
  binding: ConfirmBinding,
  deps: ConfirmDeps,
): Promise<Confirmation> {
  if (request.era === 'legacy') return refused({ kind: 'legacy' });
  if (!request.formElicitation) return refused({ kind: 'capability' });
  if (request.requestState === undefined) return ask(binding, deps, 'asked');
  // Loads the current key (reading the secret if need be), so a key rotated in is held.
  await deps.keys.current();
  const check = checkConfirmation(
    request.requestState,
    binding,
    (id) => deps.keys.byId(id),
    (deps.now ?? Date.now)(),
  );
  if (!check.ok) {
    return check.expired ? ask(binding, deps, 'expired') : refused({ kind: 'invalid', why: check.mismatch });
  }
  // A retry with the state and no answer: asked again (the specification's SHOULD).
  if (request.inputResponses === undefined) return ask(binding, deps, 'asked');
  const answer = answerOf(request.inputResponses);
  if (answer === undefined) return refused({ kind: 'invalid', why: 'answer' });
  const confirmation: ConfirmationRef = {
    id: confirmationIdOf(check.nonce),
    ...(check.formDigest === undefined ? {} : { formDigest: check.formDigest }),
  };
  if (answer === 'decline') return { kind: 'answered', outcome: 'declined', confirmation };
  if (answer === 'cancel') return { kind: 'answered', outcome: 'cancelled', confirmation };
  return {
    kind: 'accepted',
    outcome: 'accepted',
    nonce: check.nonce,
    expiresAt: check.expiresAt,
    confirmation,
  };
}

/**
 * Uses an accepted confirmation up, right before its ERP call: whether this call may run (`false`:
 * its state was used already). The store unreachable, or none configured: -32004, and nothing runs
 * (fail closed: a confirmation is used once or not at all).
 */
export async function useConfirmation(
  accepted: { readonly nonce: string; readonly expiresAt: number },
  deps: ConfirmDeps,
): Promise<boolean> {
  const { store } = deps;
  const unavailable = (cause?: unknown) =>
    new UpstreamUnavailableError(
      store === undefined
        ? 'No state store is configured for this function, so a confirmed write cannot be used exactly once and is not run: ask an operator.'
        : 'The state store could not be reached, so the confirmed call was not run (a confirmation is used once, and that could not be recorded): call again with the same requestState and answer.',
      { headers: { 'retry-after': '1' }, ...(cause === undefined ? {} : { cause }) },
    );
  if (store === undefined) throw unavailable();
  const now = (deps.now ?? Date.now)();
  try {
    return await store.markOnce(`confirm#${accepted.nonce}`, Math.ceil(accepted.expiresAt / 1000), now);
  } catch (error) {
    throw unavailable(error);
  }
}
