/**
 * @module ulid
 * ULIDs for envelope ids (the proxy's convention): 48 bits of milliseconds, then 80 random bits,
 * in Crockford's base 32, so ids sort by time in logs.
 */

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A new ULID, e.g. `01J9Z3K8Q4V6M2N7P0R5S8T1WX`. */
export function ulid(now: number = Date.now()): string {
  let time = '';
  let rest = Math.floor(now);
  for (let i = 0; i < 10; i++) {
    time = ALPHABET.charAt(rest % 32) + time;
    rest = Math.floor(rest / 32);
  }
  // 256 is a multiple of 32, so `byte & 31` is uniform.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let random = '';
  for (const byte of bytes) random += ALPHABET.charAt(byte & 31);
  return time + random;
}
