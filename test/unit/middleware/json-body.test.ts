/**
 * The body middleware on the Lambda path: bodies as API Gateway delivers them, a string or base64
 * (`isBase64Encoded`, for content types it does not take for text). Bytes that are not UTF-8 are
 * refused, never decoded into U+FFFD.
 */
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBody, NOT_UTF8_PROBLEM } from '../../../lambdas/middleware/json-body.ts';
import type { ProxyEvent } from '../../../lambdas/middleware/types.ts';

async function read(body: string, isBase64Encoded: boolean) {
  const event = {
    headers: { 'content-type': 'application/octet-stream' },
    body,
    isBase64Encoded,
  } as unknown as ProxyEvent;
  const { values } = await jsonBody().run(event, { callerName: 'test', policy: undefined, licensed: true });
  return { body: values.body, envelopeId: values.envelopeId };
}

const base64 = (...parts: Array<string | number[]>) =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))),
  ).toString('base64');

describe('jsonBody: UTF-8', () => {
  it('reads a base64 body that is UTF-8, multi-byte characters and a BOM included', async () => {
    const { body, envelopeId } = await read(base64([0xef, 0xbb, 0xbf], '{"id":"Zoë 😀","x":1}'), true);
    expect(body).toEqual({
      ok: true,
      value: { id: 'Zoë 😀', x: 1 },
      members: new Map([
        ['id', '"Zoë 😀"'],
        ['x', '1'],
      ]),
      tooDeep: false,
    });
    expect(envelopeId).toBe('Zoë 😀');
  });

  it.each([
    ['FF C3 28', [0xff, 0xc3, 0x28]],
    ['a lone continuation byte', [0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('refuses a base64 body holding %s, without echoing an id', async (_case, bad) => {
    const { body, envelopeId } = await read(base64('{"id":"', bad, '"}'), true);
    expect(body).toEqual({ ok: false, problem: NOT_UTF8_PROBLEM });
    expect(envelopeId).toBeNull();
  });

  it('refuses a text body holding a lone surrogate, and reads one holding a pair', async () => {
    expect((await read('{"id":"\ud800"}', false)).body).toEqual({ ok: false, problem: NOT_UTF8_PROBLEM });
    expect((await read('{"id":"\udc00x"}', false)).body).toEqual({ ok: false, problem: NOT_UTF8_PROBLEM });
    expect((await read('{"id":"\ud83d\ude00"}', false)).body).toMatchObject({
      ok: true,
      value: { id: '😀' },
    });
  });

  it('refuses exactly the byte strings that are not UTF-8 (fuzzed against Buffer.isUtf8)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 24 }), async (bytes) => {
        const sent = Buffer.concat([Buffer.from('{"id":"'), Buffer.from(bytes), Buffer.from('"}')]);
        const { body } = await read(sent.toString('base64'), true);
        const refusedAsUtf8 = !body.ok && body.problem === NOT_UTF8_PROBLEM;
        expect(refusedAsUtf8).toBe(!isUtf8(sent));
      }),
    );
  });
});
