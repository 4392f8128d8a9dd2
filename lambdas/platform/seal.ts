/**
 * @module platform/seal
 * Authenticated encryption of small opaque values a client carries and sends back (the MCP
 * `requestState` of a confirmation: core/confirm/state.ts): AES-256-GCM from `node:crypto`, under
 * a key derived with HKDF-SHA256 from a secret the proxy already holds, or generated at start.
 *
 * A sealed value is base64url of `version (1 byte) | key id (8 bytes) | IV (12 bytes) | ciphertext |
 * tag (16 bytes)`; the version and key id are authenticated as associated data, so neither can be
 * changed without the tag failing. The key id names the key that sealed it (a hash of the key
 * material, never the key), so a value sealed before a rotation is opened with the key it names
 * while that key is still held.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** The format's version: the first byte of every sealed value. */
const FORMAT_VERSION = 1;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;

/** The longest sealed value opened (base64url characters): a client's echo is never parsed beyond it. */
export const MAX_SEALED_LENGTH = 8_192;

/** A key of the AES-256-GCM seal, with its id (16 hex digits). */
export interface SealKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The seal key of `purpose` derived from `secret` (HKDF-SHA256): the same secret and purpose give
 * the same key and id on every instance; the id is derived apart, so it tells nothing of the key.
 */
export function deriveSealKey(secret: string | Uint8Array, purpose: string): SealKey {
  const material = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  const salt = Buffer.from('erp-proxy seal', 'utf8');
  const key = Buffer.from(hkdfSync('sha256', material, salt, `${purpose} key`, 32));
  const id = Buffer.from(hkdfSync('sha256', material, salt, `${purpose} key id`, KEY_ID_BYTES));
  return Object.freeze({ id: id.toString('hex'), key });
}

/** A random seal key (a local run: a restart forgets it, and what it sealed no longer opens). */
export function generatedSealKey(): SealKey {
  return Object.freeze({ id: randomBytes(KEY_ID_BYTES).toString('hex'), key: randomBytes(32) });
}

/** Seals `plaintext` under `key` (a fresh random IV each time). */
export function seal(plaintext: Uint8Array, key: SealKey): string {
  const header = Buffer.concat([Buffer.of(FORMAT_VERSION), Buffer.from(key.id, 'hex')]);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** What opening a sealed value found. */
export type Opened =
  | { readonly ok: true; readonly plaintext: Buffer; readonly keyId: string }
  /** Not a value of this format (length, alphabet, version). */
  | { readonly ok: false; readonly reason: 'malformed' }
  /** Sealed under a key not held (another deployment's, or one rotated away): cannot be checked. */
  | { readonly ok: false; readonly reason: 'unknown_key'; readonly keyId: string }
  /** Its tag does not verify: changed, or forged. */
  | { readonly ok: false; readonly reason: 'tampered' };

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Opens `sealed` with the key its id names (`find`), verifying its tag. */
export function unseal(sealed: string, find: (keyId: string) => SealKey | undefined): Opened {
  if (sealed.length > MAX_SEALED_LENGTH || !BASE64URL.test(sealed)) return { ok: false, reason: 'malformed' };
  const bytes = Buffer.from(sealed, 'base64url');
  // base64url that does not round-trip (a trailing character that carries no whole byte) is not ours.
  if (bytes.toString('base64url') !== sealed) return { ok: false, reason: 'malformed' };
  if (bytes.length < HEADER_BYTES + IV_BYTES + TAG_BYTES || bytes[0] !== FORMAT_VERSION) {
    return { ok: false, reason: 'malformed' };
  }
  const keyId = bytes.subarray(1, HEADER_BYTES).toString('hex');
  const key = find(keyId);
  if (key === undefined) return { ok: false, reason: 'unknown_key', keyId };
  const iv = bytes.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const body = bytes.subarray(HEADER_BYTES + IV_BYTES, bytes.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(bytes.subarray(0, HEADER_BYTES));
    decipher.setAuthTag(tag);
    return { ok: true, plaintext: Buffer.concat([decipher.update(body), decipher.final()]), keyId };
  } catch {
    return { ok: false, reason: 'tampered' };
  }
}
