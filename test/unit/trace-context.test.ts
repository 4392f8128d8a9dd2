/**
 * W3C Trace Context (level 1) as the proxy reads a caller's `traceparent` and `tracestate`
 * (lambdas/platform/trace-context.ts): property tests over generated headers, valid and not, and
 * the `traceparent` of an ERP request (the trace continued with a new span id).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  childTraceparent,
  MAX_TRACESTATE_LENGTH,
  newTrace,
  parseTraceparent,
} from '../../lambdas/platform/trace-context.ts';

const HEX = '0123456789abcdef'.split('');
const hex = (length: number) =>
  fc.array(fc.constantFrom(...HEX), { minLength: length, maxLength: length }).map((chars) => chars.join(''));
const nonZeroHex = (length: number) => hex(length).filter((text) => /[^0]/.test(text));
/** A version other than `ff`. */
const version = hex(2).filter((text) => text !== 'ff');

/** A valid version-00 `traceparent` and its parts. */
const validV00 = fc.record({ traceId: nonZeroHex(32), parentId: nonZeroHex(16), flags: hex(2) });
const v00 = (parts: { traceId: string; parentId: string; flags: string }) =>
  `00-${parts.traceId}-${parts.parentId}-${parts.flags}`;

describe('parseTraceparent (W3C Trace Context level 1)', () => {
  it('reads every valid version-00 header: its trace id and flags, as sent', () => {
    fc.assert(
      fc.property(validV00, (parts) => {
        expect(parseTraceparent(v00(parts))).toEqual({
          traceId: parts.traceId,
          flags: parts.flags,
          state: undefined,
        });
      }),
    );
  });

  it('refuses a version-00 header with anything more or less than its 55 characters', () => {
    fc.assert(
      fc.property(validV00, fc.string({ minLength: 1, maxLength: 10 }), (parts, extra) => {
        expect(parseTraceparent(`${v00(parts)}${extra}`)).toBeUndefined();
        expect(parseTraceparent(v00(parts).slice(0, 54))).toBeUndefined();
        expect(parseTraceparent(` ${v00(parts)}`)).toBeUndefined();
      }),
    );
  });

  it('refuses uppercase hex, an all-zeros trace or parent id, version ff, and a field of another length', () => {
    fc.assert(
      fc.property(validV00, (parts) => {
        const upper = v00(parts).replace(/[a-f]/, (letter) => letter.toUpperCase());
        if (upper !== v00(parts)) expect(parseTraceparent(upper)).toBeUndefined();
        expect(parseTraceparent(v00({ ...parts, traceId: '0'.repeat(32) }))).toBeUndefined();
        expect(parseTraceparent(v00({ ...parts, parentId: '0'.repeat(16) }))).toBeUndefined();
        expect(parseTraceparent(`ff-${parts.traceId}-${parts.parentId}-${parts.flags}`)).toBeUndefined();
        expect(
          parseTraceparent(`00-${parts.traceId}0-${parts.parentId.slice(1)}-${parts.flags}`),
        ).toBeUndefined();
        expect(
          parseTraceparent(`00-${parts.traceId}-${parts.parentId}-${parts.flags}`.replace(/-/g, '_')),
        ).toBeUndefined();
      }),
    );
  });

  it('refuses any text that is not a traceparent (never throws)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        const parsed = parseTraceparent(text);
        if (parsed !== undefined) expect(text).toMatch(/^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}/);
      }),
    );
    for (const value of [undefined, null, 42, {}, ['00-x'], ''])
      expect(parseTraceparent(value)).toBeUndefined();
  });

  it('reads a later version as version 00 followed by the end or a dash, keeping only the sampled flag', () => {
    fc.assert(
      fc.property(
        version.filter((text) => text !== '00'),
        validV00,
        fc.string({ maxLength: 20 }),
        (later, parts, rest) => {
          const header = `${later}-${parts.traceId}-${parts.parentId}-${parts.flags}`;
          const sampled = (Number.parseInt(parts.flags, 16) & 1) === 1 ? '01' : '00';
          const expected = { traceId: parts.traceId, flags: sampled, state: undefined };
          expect(parseTraceparent(header)).toEqual(expected);
          expect(parseTraceparent(`${header}-${rest}`)).toEqual(expected);
          if (rest !== '' && !rest.startsWith('-'))
            expect(parseTraceparent(`${header}${rest}`)).toBeUndefined();
        },
      ),
    );
  });

  it('keeps the tracestate of a valid traceparent, as received, up to 512 characters of printable ASCII', () => {
    const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(parseTraceparent(header, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')?.state).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    const longest = `a=${'x'.repeat(MAX_TRACESTATE_LENGTH - 2)}`;
    expect(parseTraceparent(header, longest)?.state).toBe(longest);
    expect(parseTraceparent(header, `${longest}x`)).toEqual({
      traceId: expect.any(String),
      flags: '01',
      state: undefined,
    });
    for (const bad of ['', 'a=b\r\nx: y', 'a=é', 'a=\u0000', 42])
      expect(parseTraceparent(header, bad)?.state).toBeUndefined();
    // An invalid traceparent is ignored with its tracestate.
    expect(parseTraceparent(header.toUpperCase(), 'a=b')).toBeUndefined();
  });
});

describe('the traces the proxy starts and continues', () => {
  it('starts a trace with a random trace id, sampled (flags 01)', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const trace = newTrace();
      expect(trace.traceId).toMatch(/^[\da-f]{32}$/);
      expect(trace.traceId).not.toBe('0'.repeat(32));
      expect(trace.flags).toBe('01');
      ids.add(trace.traceId);
    }
    expect(ids.size).toBe(500);
  });

  it("continues a trace: the same trace id and flags, a new span id per request, valid as a caller's", () => {
    fc.assert(
      fc.property(validV00, (parts) => {
        const trace = parseTraceparent(v00(parts)) as NonNullable<ReturnType<typeof parseTraceparent>>;
        const first = childTraceparent(trace);
        const second = childTraceparent(trace);
        for (const child of [first, second]) {
          expect(child).toMatch(new RegExp(`^00-${parts.traceId}-[\\da-f]{16}-${parts.flags}$`));
          expect(parseTraceparent(child)).toEqual({
            traceId: parts.traceId,
            flags: parts.flags,
            state: undefined,
          });
        }
        expect(first.slice(36, 52)).not.toBe(second.slice(36, 52));
        expect(first.slice(36, 52)).not.toBe(parts.parentId);
      }),
    );
  });
});
