/**
 * The confirmation step (core/confirm/gate-step.ts) with an accepted state: the run's value and
 * what it throws both name the confirmation (the audit record's), and a state used already ends
 * the call refused naming it too.
 */
import { describe, expect, it } from 'vitest';
import type { Confirmation } from '../../../lambdas/core/confirm/decide.ts';
import {
  type ConfirmationEnd,
  type ConfirmGate,
  passConfirmation,
} from '../../../lambdas/core/confirm/gate-step.ts';

type Accepted = Extract<Confirmation, { kind: 'accepted' }>;
const ACCEPTED: Accepted = {
  kind: 'accepted',
  outcome: 'accepted',
  nonce: 'n',
  expiresAt: Date.now() + 60_000,
  confirmation: { id: 'confirmation-id', formDigest: 'form-digest' },
};

function gate(used: boolean, seen: string[]): ConfirmGate<string> {
  return {
    decide: async () => ACCEPTED,
    ended: (end: ConfirmationEnd) =>
      `ended:${end.kind}:${end.kind === 'refused' ? end.confirmation?.id : ''}`,
    ask: async () => 'asked',
    use: async () => !used,
    accepted: (value, decision) => `${value}:${decision.confirmation.id}`,
    acceptedFailure: (error, decision) => {
      seen.push(decision.confirmation.id);
      return new Error(`${(error as Error).message}, after ${decision.confirmation.id}`);
    },
  };
}

const rest = async (call: { run: () => Promise<string> }) => ({ value: await call.run() });

describe('an accepted confirmation at the gate', () => {
  it("names the confirmation on the run's value, and on what the run throws", async () => {
    const seen: string[] = [];
    const ok = await passConfirmation(gate(false, seen), { run: async () => 'ran' }, rest);
    expect(ok.value).toBe('ran:confirmation-id');
    const failing = passConfirmation(
      gate(false, seen),
      {
        run: async () => {
          throw new Error('the ERP could not be reached');
        },
      },
      rest,
    );
    await expect(failing).rejects.toThrow('the ERP could not be reached, after confirmation-id');
    expect(seen).toEqual(['confirmation-id']);
  });

  it('a state used already ends the call refused, naming the confirmation, without running it', async () => {
    let ran = false;
    const ended = await passConfirmation(
      gate(true, []),
      {
        run: async () => {
          ran = true;
          return 'ran';
        },
      },
      rest,
    );
    expect(ended.value).toBe('ended:refused:confirmation-id');
    expect(ran).toBe(false);
  });
});
