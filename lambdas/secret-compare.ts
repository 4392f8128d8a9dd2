/**
 * @module secret-compare
 * Constant-time comparison of secrets: both sides are hashed to 32 bytes (so lengths do not
 * leak) and compared with `timingSafeEqual`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The SHA-256 digest of a secret, the form every comparison uses. */
export function secretDigest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Whether two digests from `secretDigest` are equal, in constant time. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

/**
 * Whether two secrets are equal, in constant time; an absent or empty value equals nothing.
 *
 * @example
 * sameSecret(body.erp_instance.api_key, event.headers['x-api-key']) // the proxy key sent on?
 */
export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  const equal = sameDigest(secretDigest(a ?? ''), secretDigest(b ?? ''));
  return equal && a !== undefined && a !== '' && b !== undefined && b !== '';
}
