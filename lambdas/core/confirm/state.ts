/**
 * @module core/confirm/state
 * The `requestState` of a confirmation round (MCP 2026-07-28 input-required results): what the
 * person was asked about, sealed (platform/seal.ts, AES-256-GCM) so that the client, which sends it
 * back, can neither read nor change it. The specification says so: a state that comes back is
 * attacker-controlled input, and a server whose state influences authorization protects its
 * integrity and rejects state that fails verification.
 *
 * A state binds, as SHA-256 hashes inside the sealed text:
 *
 * - the caller (a proxy key's name, or the OAuth issuer and subject: the idempotency scope);
 * - the tool and all its arguments, `idempotency_key` included (canonical JSON);
 * - the ERP connection: URL, database, and a hash of the ERP user and key, so a confirmation shown
 *   for one ERP cannot be replayed at another by changing the `x-erp-*` headers;
 * - an expiry (`CONFIRM_TTL`) and a random nonce (used once: core/confirm/gate-step.ts).
 *
 * The seal's key id travels in the clear (authenticated), so a state sealed before a rotation is
 * opened with the key it names while that key is held.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../../platform/json.ts';
import { type SealKey, seal, unseal } from '../../platform/seal.ts';

/** What a confirmation is bound to: the call as the gate sees it. */
export interface ConfirmBinding {
  /** Whose call: the idempotency scope's text (`key:<name>`, `oauth:<issuer> <sub>`). */
  readonly caller: string;
  readonly tool: string;
  /** The tool's checked arguments, `idempotency_key` included. */
  readonly args: unknown;
  /** The ERP connection: URL, database, and the user and key (hashed, never kept). */
  readonly erp: {
    readonly url: string;
    readonly db: string;
    readonly uid: number | undefined;
    readonly apiKey: string;
  };
}

/** A sealed state with what the step needs of it afterwards. */
export interface SealedConfirmation {
  readonly requestState: string;
  readonly nonce: string;
  /** Epoch ms after which the state no longer confirms anything. */
  readonly expiresAt: number;
}

/** Which part of a state does not fit the call it came back with (a -32602's message says it). */
export type StateMismatch = 'tampered' | 'caller' | 'erp' | 'arguments';

/** What a state that came back with a call says. */
export type StateCheck =
  | {
      readonly ok: true;
      readonly nonce: string;
      readonly expiresAt: number;
      /** The digest of the form shown with the state. */
      readonly formDigest?: string;
    }
  /** Past its expiry, or sealed under a key no longer held: the person is asked again. */
  | { readonly ok: false; readonly expired: true }
  | { readonly ok: false; readonly expired: false; readonly mismatch: StateMismatch };

/** A confirmation's id, as an audit record names it: a hash of its state's nonce (never the nonce). */
export function confirmationIdOf(nonce: string): string {
  return sha256(`erp-proxy confirmation id\n${nonce}`).slice(0, 22);
}

/** The sealed text's format version (inside the seal; the seal has its own). */
const STATE_VERSION = 1;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/** The hashes a state binds, in the order a mismatch is reported. */
function bindingHashes(binding: ConfirmBinding): {
  readonly c: string;
  readonly e: string;
  readonly a: string;
} {
  const { url, db, uid, apiKey } = binding.erp;
  // The user and key are hashed apart first, so the ERP's hash holds no key even before hashing.
  const user = sha256(JSON.stringify([uid ?? null, apiKey]));
  return {
    c: sha256(binding.caller),
    e: sha256(JSON.stringify([url, db, user])),
    a: sha256(`${binding.tool}\n${canonicalJson(JSON.stringify(binding.args ?? {}))}`),
  };
}

/**
 * Seals a new state for `binding`, valid `ttlSeconds` from `now` (epoch ms); `formDigest`: the
 * digest of the form shown with it, which the answer's audit record names (docs/guide/audit.md).
 */
export function sealConfirmation(
  binding: ConfirmBinding,
  key: SealKey,
  now: number,
  ttlSeconds: number,
  formDigest?: string,
): SealedConfirmation {
  const nonce = randomBytes(16).toString('base64url');
  const expiresAt = now + ttlSeconds * 1000;
  const payload = {
    v: STATE_VERSION,
    ...bindingHashes(binding),
    x: expiresAt,
    n: nonce,
    ...(formDigest === undefined ? {} : { f: formDigest }),
  };
  return { requestState: seal(Buffer.from(JSON.stringify(payload), 'utf8'), key), nonce, expiresAt };
}

/** The payload of an opened state, or `undefined` when it is not one this module sealed. */
function payloadOf(plaintext: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(plaintext.toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const payload = value as Record<string, unknown>;
    const fields = ['c', 'e', 'a', 'n'].every((name) => typeof payload[name] === 'string');
    return payload.v === STATE_VERSION && fields && Number.isSafeInteger(payload.x) ? payload : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a state that came back with a call against that call (`binding`) at `now` (epoch ms):
 * its seal (with the key its id names: `keyById`), then the caller, the ERP, the arguments, then
 * its expiry. A state for another call is refused even when it has expired too.
 */
export function checkConfirmation(
  requestState: string,
  binding: ConfirmBinding,
  keyById: (id: string) => SealKey | undefined,
  now: number,
): StateCheck {
  const opened = unseal(requestState, keyById);
  if (!opened.ok) {
    return opened.reason === 'unknown_key'
      ? { ok: false, expired: true }
      : { ok: false, expired: false, mismatch: 'tampered' };
  }
  const payload = payloadOf(opened.plaintext);
  if (payload === undefined) return { ok: false, expired: false, mismatch: 'tampered' };
  const expected = bindingHashes(binding);
  if (payload.c !== expected.c) return { ok: false, expired: false, mismatch: 'caller' };
  if (payload.e !== expected.e) return { ok: false, expired: false, mismatch: 'erp' };
  if (payload.a !== expected.a) return { ok: false, expired: false, mismatch: 'arguments' };
  const expiresAt = payload.x as number;
  if (now >= expiresAt) return { ok: false, expired: true };
  const formDigest = typeof payload.f === 'string' ? payload.f : undefined;
  return {
    ok: true,
    nonce: payload.n as string,
    expiresAt,
    ...(formDigest === undefined ? {} : { formDigest }),
  };
}
