import { describe, expect, it } from 'vitest';
import { allocateWithRoom, HEAD_ROOM, wrapBytes } from '../../lambdas/platform/buffers.ts';

describe('wrapBytes', () => {
  const prefix = Buffer.from('{"result":');
  const suffix = Buffer.from('}');

  it('wraps a body that has private room in place (no copy)', () => {
    const body = allocateWithRoom(5);
    body.write('[1,2]');
    const whole = wrapBytes(prefix, body, suffix);
    expect(whole.toString()).toBe('{"result":[1,2]}');
    expect(whole.buffer).toBe(body.buffer);
  });

  it('wraps a span in the middle of a received answer in place, overwriting what came before it', () => {
    const answer = allocateWithRoom(30);
    answer.write('{"jsonrpc":"2.0","result":[7]}');
    const span = answer.subarray(26, 29);
    expect(
      wrapBytes(Buffer.from('{"x":"a much longer head than before","result":'), span, suffix).toString(),
    ).toBe('{"x":"a much longer head than before","result":[7]}');
  });

  it('copies when the room is too small, and never writes around a buffer it did not allocate', () => {
    const body = allocateWithRoom(2);
    body.write('[]');
    const hugeHead = Buffer.alloc(HEAD_ROOM + 1, 0x20);
    const copied = wrapBytes(hugeHead, body, suffix);
    expect(copied.buffer).not.toBe(body.buffer);

    // A slice of Node's shared pool: the bytes around it belong to other buffers.
    const pooled = Buffer.from('xx[3]yy');
    const view = pooled.subarray(2, 5);
    const wrapped = wrapBytes(prefix, view, suffix);
    expect(wrapped.toString()).toBe('{"result":[3]}');
    expect(pooled.toString()).toBe('xx[3]yy');
  });
});
