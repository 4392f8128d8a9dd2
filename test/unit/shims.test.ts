/**
 * The bundle's stand-in for `node:stream/web` (lib/proxy-function.ts aliases it): `instanceof`
 * answers exactly as Node's own `ReadableStream` would.
 */
import { Readable } from 'node:stream';
import { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { describe, expect, it } from 'vitest';
import { ReadableStream } from '../../lambdas/platform/shims/stream-web.ts';

describe('shims/stream-web ReadableStream', () => {
  it('recognises a web ReadableStream and nothing else', () => {
    expect(new NodeReadableStream() instanceof ReadableStream).toBe(true);
    expect(Readable.toWeb(Readable.from(['x'])) instanceof ReadableStream).toBe(true);
    for (const value of ['body', Buffer.from('x'), Readable.from(['x']), {}, null, undefined]) {
      expect(value instanceof ReadableStream).toBe(false);
    }
  });
});
