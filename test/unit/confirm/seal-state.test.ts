/**
 * The seal of a confirmation's `requestState` (lambdas/platform/seal.ts, lambdas/core/confirm/state.ts)
 * and its keys (lambdas/core/confirm/keys.ts): each refusal case, and a property test that no
 * change to a sealed state verifies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { derivedSealKeys, generatedSealKeys } from '../../../lambdas/core/confirm/keys.ts';
import {
  type ConfirmBinding,
  checkConfirmation,
  sealConfirmation,
} from '../../../lambdas/core/confirm/state.ts';
import { deriveSealKey, generatedSealKey, seal, unseal } from '../../../lambdas/platform/seal.ts';

const NOW = Date.UTC(2026, 10, 29, 3, 0, 0);
const KEY = deriveSealKey('secret one', 'test');
const find = (id: string) => (id === KEY.id ? KEY : undefined);

const BINDING: ConfirmBinding = {
  caller: 'key:agent',
  tool: 'write',
  args: { model: 'res.partner', ids: [7], values: { name: 'Acme' }, idempotency_key: 'k-1' },
  erp: { url: 'https://erp.example.com/', db: 'prod', uid: 2, apiKey: 'erp-key-1' },
};

describe('the seal (AES-256-GCM)', () => {
  it('opens what it sealed, with the key its id names', () => {
    const sealed = seal(Buffer.from('hello'), KEY);
    const opened = unseal(sealed, find);
    expect(opened).toEqual({ ok: true, plaintext: Buffer.from('hello'), keyId: KEY.id });
  });

  it('derives the same key and id from the same secret and purpose, others from others', () => {
    expect(deriveSealKey('secret one', 'test')).toEqual(KEY);
    expect(deriveSealKey('secret two', 'test').id).not.toBe(KEY.id);
    expect(deriveSealKey('secret one', 'other').key.equals(KEY.key)).toBe(false);
    // The id is no part of the key.
    expect(KEY.key.toString('hex')).not.toContain(KEY.id);
  });

  it('seals the same text differently each time (a fresh IV)', () => {
    expect(seal(Buffer.from('x'), KEY)).not.toBe(seal(Buffer.from('x'), KEY));
  });

  it('refuses a value of another format, one under a key not held, and one changed', () => {
    expect(unseal('not base64 !', find)).toEqual({ ok: false, reason: 'malformed' });
    expect(unseal('AAAA', find)).toEqual({ ok: false, reason: 'malformed' });
    const other = generatedSealKey();
    expect(unseal(seal(Buffer.from('x'), other), find)).toEqual({
      ok: false,
      reason: 'unknown_key',
      keyId: other.id,
    });
    const bytes = Buffer.from(seal(Buffer.from('hello'), KEY), 'base64url');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    expect(unseal(bytes.toString('base64url'), find)).toEqual({ ok: false, reason: 'tampered' });
  });
});

describe('a confirmation state', () => {
  const sealed = () => sealConfirmation(BINDING, KEY, NOW, 600);

  it('verifies for the call it was sealed for, until its expiry, with its nonce', () => {
    const state = sealed();
    expect(state.expiresAt).toBe(NOW + 600_000);
    expect(checkConfirmation(state.requestState, BINDING, find, NOW + 599_999)).toEqual({
      ok: true,
      nonce: state.nonce,
      expiresAt: state.expiresAt,
    });
  });

  it('holds none of what it binds in the clear (the ERP key, the values, the caller)', () => {
    const text = Buffer.from(sealed().requestState, 'base64url').toString('latin1');
    for (const secret of ['erp-key-1', 'Acme', 'agent', 'res.partner']) expect(text).not.toContain(secret);
  });

  it('is refused for another caller, another ERP and other arguments, naming which', () => {
    const { requestState } = sealed();
    const check = (binding: ConfirmBinding) => checkConfirmation(requestState, binding, find, NOW);
    expect(check({ ...BINDING, caller: 'key:other' })).toMatchObject({ ok: false, mismatch: 'caller' });
    for (const erp of [
      { ...BINDING.erp, url: 'https://other.example.com/' },
      { ...BINDING.erp, db: 'test' },
      { ...BINDING.erp, uid: 3 },
      { ...BINDING.erp, apiKey: 'erp-key-2' },
    ]) {
      expect(check({ ...BINDING, erp })).toMatchObject({ ok: false, mismatch: 'erp' });
    }
    expect(check({ ...BINDING, tool: 'unlink' })).toMatchObject({ ok: false, mismatch: 'arguments' });
    const args = BINDING.args as Record<string, unknown>;
    for (const changed of [
      { ...args, ids: [8] },
      { ...args, values: { name: 'Acme ' } },
      { ...args, idempotency_key: 'k-2' },
      { model: args.model, ids: args.ids, values: args.values },
    ]) {
      expect(check({ ...BINDING, args: changed })).toMatchObject({ ok: false, mismatch: 'arguments' });
    }
  });

  it('binds the arguments, not the order their members were sent in', () => {
    const { requestState } = sealed();
    const args = BINDING.args as Record<string, unknown>;
    const reordered = {
      idempotency_key: args.idempotency_key,
      values: args.values,
      ids: args.ids,
      model: args.model,
    };
    expect(checkConfirmation(requestState, { ...BINDING, args: reordered }, find, NOW)).toMatchObject({
      ok: true,
    });
  });

  it('has expired at its expiry, and when its key is no longer held (asked again)', () => {
    const { requestState } = sealed();
    expect(checkConfirmation(requestState, BINDING, find, NOW + 600_000)).toEqual({
      ok: false,
      expired: true,
    });
    expect(checkConfirmation(requestState, BINDING, () => undefined, NOW)).toEqual({
      ok: false,
      expired: true,
    });
  });

  it('refuses a state another call of the same caller was sealed for, even once both expired', () => {
    const { requestState } = sealed();
    const other = { ...BINDING, tool: 'create' };
    expect(checkConfirmation(requestState, other, find, NOW + 10_000_000)).toMatchObject({
      mismatch: 'arguments',
    });
  });

  it('refuses a sealed text that is not a state (sealed by the same key for something else)', () => {
    const notAState = seal(Buffer.from(JSON.stringify({ v: 1, c: 'x' })), KEY);
    expect(checkConfirmation(notAState, BINDING, find, NOW)).toMatchObject({ mismatch: 'tampered' });
  });

  it('property: no change to a sealed state verifies (a byte changed, cut, or added)', () => {
    const { requestState } = sealed();
    const bytes = Buffer.from(requestState, 'base64url');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({
            kind: fc.constant('flip' as const),
            at: fc.nat({ max: bytes.length - 1 }),
            mask: fc.integer({ min: 1, max: 255 }),
          }),
          fc.record({ kind: fc.constant('cut' as const), at: fc.nat({ max: bytes.length - 1 }) }),
          fc.record({
            kind: fc.constant('add' as const),
            extra: fc.uint8Array({ minLength: 1, maxLength: 8 }),
          }),
        ),
        (change) => {
          const changed = Buffer.from(bytes);
          let text: string;
          if (change.kind === 'flip') {
            changed[change.at] = (changed[change.at] as number) ^ change.mask;
            text = changed.toString('base64url');
          } else if (change.kind === 'cut') {
            text = changed.subarray(0, change.at).toString('base64url');
          } else {
            text = Buffer.concat([changed, change.extra]).toString('base64url');
          }
          expect(checkConfirmation(text, BINDING, find, NOW).ok).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the seal keys of an instance', () => {
  it('derive one key from the secret, and keep a rotated one until every state it sealed expired', async () => {
    let secret = 'keys v1';
    let now = NOW;
    const ring = derivedSealKeys(
      async () => secret,
      () => now,
    );
    const first = await ring.current();
    expect(first).toEqual(deriveSealKey('keys v1', 'erp-proxy mcp confirmation requestState v1'));
    secret = 'keys v2';
    const second = await ring.current();
    expect(second.id).not.toBe(first.id);
    expect(ring.byId(first.id)).toEqual(first);
    now += 3_600_000;
    expect(ring.byId(first.id)).toEqual(first);
    now += 61_000;
    expect(ring.byId(first.id)).toBeUndefined();
    expect(ring.byId(second.id)).toEqual(second);
  });

  it('read the secret only when a key is asked for', async () => {
    let reads = 0;
    const ring = derivedSealKeys(async () => {
      reads += 1;
      return 'keys';
    });
    expect(reads).toBe(0);
    expect(ring.byId('0000000000000000')).toBeUndefined();
    expect(reads).toBe(0);
    await ring.current();
    expect(reads).toBe(1);
  });

  it('generated locally: one random key per start', async () => {
    const one = generatedSealKeys();
    const two = generatedSealKeys();
    const key = await one.current();
    expect(one.byId(key.id)).toBe(key);
    expect(two.byId(key.id)).toBeUndefined();
  });
});
