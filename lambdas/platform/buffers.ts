/**
 * @module platform/buffers
 * Buffers with private room around them, so an answer of several megabytes can be wrapped in
 * its envelope where it lies instead of being copied (one copy less: for a 5 MB answer, 5 MB
 * less at the peak).
 */

/** Backing stores allocated here: nothing else shares them, so their spare room may be written. */
const exclusive = new WeakSet<ArrayBufferLike>();

/** Room kept before and after a received body: an envelope head with an id of ~1 KB fits. */
export const HEAD_ROOM = 1024;
export const TAIL_ROOM = 64;

/** A `size`-byte view with private, writable room of `HEAD_ROOM` before it and `TAIL_ROOM` after. */
export function allocateWithRoom(size: number): Buffer {
  const backing = Buffer.allocUnsafeSlow(HEAD_ROOM + size + TAIL_ROOM);
  exclusive.add(backing.buffer);
  return backing.subarray(HEAD_ROOM, HEAD_ROOM + size);
}

/**
 * `prefix + body + suffix`: written around `body` in place when `body` lies in a buffer from
 * {@link allocateWithRoom} with room enough (the bytes around it are then overwritten), else a
 * new buffer.
 */
export function wrapBytes(prefix: Buffer, body: Buffer, suffix: Buffer): Buffer {
  const start = body.byteOffset - prefix.length;
  const end = body.byteOffset + body.length + suffix.length;
  if (exclusive.has(body.buffer) && start >= 0 && end <= body.buffer.byteLength) {
    const whole = Buffer.from(body.buffer, start, end - start);
    prefix.copy(whole, 0);
    suffix.copy(whole, prefix.length + body.length);
    return whole;
  }
  return Buffer.concat([prefix, body, suffix]);
}
