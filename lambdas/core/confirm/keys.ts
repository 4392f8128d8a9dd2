/**
 * @module core/confirm/keys
 * The keys that seal confirmation states (core/confirm/state.ts), held per instance:
 *
 * - deployed, derived (HKDF, platform/seal.ts) from a secret the function already reads: the proxy
 *   keys' values, read through the keys' source (cached like every secret read) and only when a
 *   confirmation is asked or answered, so a call that needs none reads nothing more. Every
 *   instance derives the same key from the same secret;
 * - locally (no secret), generated at start: a restart forgets pending confirmations (they are
 *   asked again).
 *
 * A rotation of the secret gives a new key with a new id; the keys an instance held before stay
 * until every state they sealed has expired (`CONFIRM_TTL` is at most an hour), so a state sealed
 * just before a rotation still opens there. A state whose key this instance never held (sealed by
 * another instance before a rotation this one never saw) cannot be checked: it counts as expired,
 * and the person is asked again.
 */
import { deriveSealKey, generatedSealKey, type SealKey } from '../../platform/seal.ts';

/** HKDF's purpose: keys for anything else derived from the same secret are other keys. */
const PURPOSE = 'erp-proxy mcp confirmation requestState v1';

/** How long a key is kept after a newer one replaced it: the longest `CONFIRM_TTL`, and a minute. */
const RETIRED_KEY_MS = 3_660_000;
/** At most this many keys are held (rotations are rare; a bound keeps a flapping secret harmless). */
const MAX_KEYS = 8;

/** The seal keys of an instance: the current one, and any held key by its id. */
export interface SealKeyRing {
  /** The key new states are sealed with (reading the secret when needed). */
  current(): Promise<SealKey>;
  /** A held key by its id: the current one, or one a rotation retired less than an hour ago. */
  byId(id: string): SealKey | undefined;
}

/** A ring whose key is derived from `readSecret`'s text (`now`: the clock, epoch ms). */
export function derivedSealKeys(
  readSecret: () => Promise<string>,
  now: () => number = Date.now,
): SealKeyRing {
  const held = new Map<string, { readonly key: SealKey; retiredAt: number | undefined }>();
  let current: SealKey | undefined;
  let lastText: string | undefined;
  return {
    async current() {
      const text = await readSecret();
      if (current !== undefined && text === lastText) return current;
      const key = deriveSealKey(text, PURPOSE);
      const at = now();
      if (current !== undefined && current.id !== key.id) {
        const retired = held.get(current.id);
        if (retired !== undefined) retired.retiredAt = at;
      }
      held.set(key.id, { key, retiredAt: undefined });
      for (const [id, entry] of held) {
        if (entry.retiredAt !== undefined && at - entry.retiredAt > RETIRED_KEY_MS) held.delete(id);
      }
      // The oldest first (insertion order): past the bound, the oldest retired keys go.
      for (const id of held.keys()) if (held.size > MAX_KEYS && id !== key.id) held.delete(id);
      current = key;
      lastText = text;
      return key;
    },
    byId(id) {
      const entry = held.get(id);
      if (entry === undefined) return undefined;
      return entry.retiredAt === undefined || now() - entry.retiredAt <= RETIRED_KEY_MS
        ? entry.key
        : undefined;
    },
  };
}

/** A ring of one key generated now (a local run). */
export function generatedSealKeys(): SealKeyRing {
  const key = generatedSealKey();
  return {
    current: async () => key,
    byId: (id) => (id === key.id ? key : undefined),
  };
}
