/**
 * The audit's hash chain and seals (platform/audit/audit-chain.ts; issue 57's first part): the
 * canonical form with fixed vectors, the chain recomputed step by step here, seals signed by a
 * local P-256 key and verified, and each tampering of an export named: a record's field changed,
 * a record removed, one inserted, two swapped, a seal's count changed, a seal re-signed with
 * another key, a window deleted. The untouched export verifies.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  chainHead,
  GENESIS_HEAD,
  keyPairSigner,
  type SealedWindow,
  sealWindow,
  verifyWindows,
} from '../../lambdas/platform/audit/audit-chain.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { canonicalJsonOf } from '../../lambdas/platform/canonical-json.ts';
import { auditRecord } from '../support/audit-records.ts';

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const START = Date.UTC(2026, 11, 7, 10, 0);
const FIVE_MINUTES = 300_000;

const record = (ms: number): AuditRecord => auditRecord(ms);

/** Three consecutive windows (the middle one empty), sealed in a chain. */
async function exportOf(): Promise<SealedWindow[]> {
  const windows: SealedWindow[] = [];
  let previous = GENESIS_HEAD;
  for (const [index, count] of [3, 0, 2].entries()) {
    const start = START + index * FIVE_MINUTES;
    const records = Array.from({ length: count }, (_, i) => record(start + 1000 * (i + 1)));
    const sealed = await sealWindow(
      { start, end: start + FIVE_MINUTES, auditOn: true },
      records,
      previous,
      keyPairSigner(keys),
      start + 2 * FIVE_MINUTES,
    );
    windows.push(sealed);
    previous = sealed.seal.head;
  }
  return windows;
}

const kinds = (windows: SealedWindow[]) =>
  verifyWindows(windows, keys.publicKey).problems.map((problem) => problem.kind);

describe('the canonical form (RFC 8785)', () => {
  it('sorts members by UTF-16 code units, drops whitespace, writes numbers and strings as ECMAScript does', async () => {
    expect(canonicalJsonOf({ b: 1, a: [true, null, 'x'], c: { z: 1e21, y: 0.1 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"c":{"y":0.1,"z":1e+21}}',
    );
    // "€" (U+20AC) sorts before "😀" (U+D83D U+DE00) by code units, after it by code points.
    expect(canonicalJsonOf({ '😀': 1, '€': 2 })).toBe('{"€":2,"😀":1}');
    expect(canonicalJsonOf({ s: 'line\nbreak "quoted"' })).toBe('{"s":"line\\nbreak \\"quoted\\""}');
    expect(() => canonicalJsonOf({ n: Number.NaN })).toThrow(TypeError);
  });
});

describe('the chain', () => {
  it('is SHA-256(previous head || SHA-256(line)) per line, from the previous head', async () => {
    const lines = ['{"a":1}', '{"b":2}'];
    let head = Buffer.from(GENESIS_HEAD, 'hex');
    for (const line of lines) {
      const lineHash = createHash('sha256').update(line, 'utf8').digest();
      head = createHash('sha256')
        .update(Buffer.concat([head, lineHash]))
        .digest();
    }
    expect(chainHead(GENESIS_HEAD, lines)).toBe(head.toString('hex'));
    expect(chainHead('ab'.repeat(32), [])).toBe('ab'.repeat(32));
  });

  it('gives the fixed vectors computed apart from it (sha256sum and xxd in a shell)', () => {
    // G = 64 zeros; h1 = sha256('{"a":1}'); head1 = sha256(bytes(G) || bytes(h1)); then '{"b":[true,null]}'.
    expect(chainHead(GENESIS_HEAD, ['{"a":1}'])).toBe(
      '46426333c3717c14f84a3ad37f229fef9334f7298e19ea3cd9acae85e06268e4',
    );
    expect(chainHead(GENESIS_HEAD, [canonicalJsonOf({ a: 1 }), canonicalJsonOf({ b: [true, null] })])).toBe(
      '55ede03c9b94b352aa41319707e643d61c9103a9b263169a757d4459727e84fd',
    );
  });
});

describe('verifying an export', () => {
  it('holds untouched: every window and record verified, the empty window sealed too', async () => {
    const windows = await exportOf();
    expect(windows[1]?.seal).toMatchObject({ count: 0, first_audit_id: null, head: windows[0]?.seal.head });
    expect(verifyWindows(windows, keys.publicKey)).toEqual({ windows: 3, records: 5, problems: [] });
  });

  it('names a changed field, a removed, an inserted and a reordered record', async () => {
    const changed = await exportOf();
    const first = changed[0] as SealedWindow;
    changed[0] = {
      ...first,
      lines: [
        first.lines[0] as string,
        (first.lines[1] as string).replace('"write"', '"unlink"'),
        first.lines[2] as string,
      ],
    };
    expect(kinds(changed)).toEqual(['record_changed']);

    const removed = await exportOf();
    removed[0] = { ...(removed[0] as SealedWindow), lines: (removed[0] as SealedWindow).lines.slice(1) };
    expect(kinds(removed)).toEqual(['records_removed']);

    const inserted = await exportOf();
    const extra = canonicalJsonOf(record(START + 5000));
    inserted[0] = {
      ...(inserted[0] as SealedWindow),
      lines: [...(inserted[0] as SealedWindow).lines, extra],
    };
    expect(kinds(inserted)).toEqual(['records_inserted']);

    const swapped = await exportOf();
    const [a, b, c] = (swapped[0] as SealedWindow).lines;
    swapped[0] = { ...(swapped[0] as SealedWindow), lines: [b as string, a as string, c as string] };
    expect(kinds(swapped)).toEqual(['reordered']);
  });

  it("names a seal's count changed, a seal re-signed with another key, and a window deleted", async () => {
    const counted = await exportOf();
    counted[2] = {
      ...(counted[2] as SealedWindow),
      seal: { ...(counted[2] as SealedWindow).seal, count: 1 },
    };
    expect(kinds(counted)).toContain('signature');

    const resigned = await exportOf();
    const window = resigned[2] as SealedWindow;
    const records = window.lines.map((line) => JSON.parse(line) as AuditRecord);
    const start = Date.parse(window.seal.window_start);
    resigned[2] = await sealWindow(
      { start, end: start + FIVE_MINUTES, auditOn: true },
      records,
      window.seal.previous,
      keyPairSigner(other),
      Date.now(),
    );
    expect(kinds(resigned)).toEqual(['wrong_key', 'signature']);

    const deleted = await exportOf();
    deleted.splice(1, 1);
    const report = verifyWindows(deleted, keys.publicKey);
    expect(report.problems).toEqual([
      {
        kind: 'window_missing',
        from: new Date(START + FIVE_MINUTES).toISOString(),
        to: new Date(START + 2 * FIVE_MINUTES).toISOString(),
      },
    ]);
  });
});
