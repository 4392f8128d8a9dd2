/**
 * The sealer (platform/audit/seal-windows.ts) over the embedded ring and a directory archive, and
 * `verifyArchive` (platform/audit/audit-verify.ts) of what it wrote: windows sealed in order from
 * the genesis, empty ones too, none before it is closed, a stale pending record completed as
 * `unknown` before it is sealed, a run's bound, two sealers on one head sealing each window once,
 * an archive object that holds other records refused, the public key published once.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AuditSeal,
  GENESIS_HEAD,
  keyIdOf,
  keyPairSigner,
} from '../../lambdas/platform/audit/audit-chain.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import {
  type ArchiveProblem,
  describeFinding,
  verifyArchive,
} from '../../lambdas/platform/audit/audit-verify.ts';
import { DirectorySealArchive } from '../../lambdas/platform/audit/seal-archive-dir.ts';
import {
  ArchiveSealHead,
  type SealHead,
  type SealHeadStore,
} from '../../lambdas/platform/audit/seal-head.ts';
import {
  linesOf,
  publicKeyKey,
  recordsBody,
  recordsKey,
  SEAL_MARGIN_MS,
  sealBody,
  sealKey,
  sealOfBody,
} from '../../lambdas/platform/audit/seal-layout.ts';
import {
  SealConflict,
  type SealerParts,
  sealClosedWindows,
} from '../../lambdas/platform/audit/seal-windows.ts';
import { canonicalJsonOf } from '../../lambdas/platform/canonical-json.ts';
import { auditRecord } from '../support/audit-records.ts';

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const MINUTE = 60_000;
const DAY = Date.UTC(2026, 11, 7);
const PENDING_MS = 58_000;
const settings = { minutes: 5, pendingAfterMs: PENDING_MS, auditOn: true, lockDays: undefined, genesis: DAY };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh archive, ring and clock. */
function parts(now: number, overrides: Partial<SealerParts> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-seal-'));
  dirs.push(dir);
  const ring = new EmbeddedAuditStore();
  const archive = new DirectorySealArchive(dir);
  const clock = { now };
  const sealer: SealerParts = {
    source: ring,
    complete: (record) => ring.finish(record, 0),
    heads: new ArchiveSealHead(archive),
    archive,
    signer: keyPairSigner(keys),
    now: () => clock.now,
    ...overrides,
  };
  return { dir, ring, archive, clock, sealer };
}

/** When window `index` of the day may first be sealed. */
const closesAt = (index: number) => DAY + (index + 1) * 5 * MINUTE + PENDING_MS + SEAL_MARGIN_MS;

async function seals(archive: DirectorySealArchive) {
  return (await archive.list('seals/')).map((object) => object.key);
}

describe('the sealer', () => {
  it('seals every closed window in order from the genesis, an empty one too, and none still open', async () => {
    const { ring, archive, sealer, clock } = parts(closesAt(2) - 1);
    const a = auditRecord(DAY + 1_000);
    const b = auditRecord(DAY + 2_000);
    const c = auditRecord(DAY + 10 * MINUTE + 5_000);
    for (const record of [c, a, b]) await ring.create(record);
    const first = await sealClosedWindows(sealer, settings);
    // Windows 0 and 1 are closed; window 2 (with c) is not, by one millisecond.
    expect(first).toMatchObject({ sealed: 2, stopped: 'caught_up', head: { end: DAY + 10 * MINUTE } });
    expect(await seals(archive)).toEqual([sealKey(DAY), sealKey(DAY + 5 * MINUTE)]);
    const window0 = sealOfBody((await archive.read(sealKey(DAY))) as Buffer);
    expect(window0?.seal).toMatchObject({
      count: 2,
      first_audit_id: a.audit_id,
      last_audit_id: b.audit_id,
      previous: GENESIS_HEAD,
    });
    expect(linesOf((await archive.read(recordsKey(DAY))) as Buffer)).toEqual([a, b].map(canonicalJsonOf));
    // The empty window: a seal of count 0 that keeps the head, and no records object.
    const window1 = sealOfBody((await archive.read(sealKey(DAY + 5 * MINUTE))) as Buffer);
    expect(window1?.seal).toMatchObject({ count: 0, head: window0?.seal.head, previous: window0?.seal.head });
    expect(await archive.read(recordsKey(DAY + 5 * MINUTE))).toBeUndefined();

    clock.now = closesAt(2);
    expect(await sealClosedWindows(sealer, settings)).toMatchObject({ sealed: 1, lagMinutes: 1 });
    const report = await verifyArchive(archive, {
      from: DAY,
      to: DAY + 86_400_000,
      publicKey: keys.publicKey,
      lateAfterMs: 20 * MINUTE,
    });
    expect(report).toMatchObject({
      windows: 3,
      records: 3,
      problems: [],
      notices: [{ kind: 'chain_start', window: new Date(DAY).toISOString() }],
    });
  });

  it('completes a stale pending record as unknown, and seals the completion', async () => {
    const { ring, archive, sealer } = parts(closesAt(0));
    const pending = auditRecord(DAY + 4 * MINUTE, { outcome: 'pending' });
    await ring.create(pending);
    await sealClosedWindows(sealer, settings);
    const [line] = linesOf((await archive.read(recordsKey(DAY))) as Buffer);
    expect(JSON.parse(line as string)).toMatchObject({ audit_id: pending.audit_id, outcome: 'unknown' });
    expect((await ring.readWindow(DAY, DAY + 5 * MINUTE))[0]?.outcome).toBe('unknown');
  });

  it('stops at its bound, and the next run goes on from there', async () => {
    const { archive, sealer } = parts(closesAt(9));
    expect(await sealClosedWindows(sealer, { ...settings, maxWindows: 4 })).toMatchObject({
      sealed: 4,
      stopped: 'bound',
    });
    expect(await sealClosedWindows(sealer, { ...settings, maxWindows: 4 })).toMatchObject({
      sealed: 4,
      stopped: 'bound',
    });
    expect(await sealClosedWindows(sealer, { ...settings, maxWindows: 4 })).toMatchObject({
      sealed: 2,
      stopped: 'caught_up',
    });
    expect(await seals(archive)).toHaveLength(10);
  });

  it('after AUDIT_SEAL_MINUTES changes, seals up to the new grid first, never across a UTC day', async () => {
    // Sealed with 5-minute windows up to 23:55; then 15-minute ones: [23:55, 00:00), [00:00, 00:15).
    const evening = DAY - 5 * MINUTE;
    const { ring, archive, sealer, clock } = parts(evening + 20 * MINUTE + PENDING_MS + SEAL_MARGIN_MS);
    await ring.create(auditRecord(evening + 1_000));
    await ring.create(auditRecord(DAY + 1_000));
    const read = ring.readWindow.bind(ring);
    const asked: [number, number][] = [];
    const watched = {
      ...sealer,
      source: {
        readWindow: (start: number, end: number) => {
          asked.push([start, end]);
          return read(start, end);
        },
      },
    };
    clock.now = evening + PENDING_MS + SEAL_MARGIN_MS; // nothing closed yet under 5 minutes
    expect((await sealClosedWindows(watched, { ...settings, genesis: evening - 5 * MINUTE })).sealed).toBe(1);
    clock.now = DAY + 15 * MINUTE + PENDING_MS + SEAL_MARGIN_MS;
    expect(await sealClosedWindows(watched, { ...settings, minutes: 15 })).toMatchObject({ sealed: 2 });
    expect(asked.slice(1)).toEqual([
      [evening, DAY],
      [DAY, DAY + 15 * MINUTE],
    ]);
    const report = await verifyArchive(archive, {
      from: evening - 5 * MINUTE,
      to: DAY + 86_400_000,
      publicKey: keys.publicKey,
      lateAfterMs: 20 * MINUTE,
    });
    expect(report).toMatchObject({ windows: 3, records: 2, problems: [] });
  });

  it('two sealers on one head seal each window once, whichever writes first', async () => {
    // One head with a condition, as the table's item: advance only from the head read.
    let held: SealHead | undefined;
    const heads: SealHeadStore = {
      read: async () => held,
      advance: async (from, to) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (held?.head !== from?.head || held?.end !== from?.end) return false;
        held = to;
        return true;
      },
    };
    const one = parts(closesAt(5), { heads });
    const ring = one.ring;
    for (let i = 0; i < 12; i += 1) await ring.create(auditRecord(DAY + i * 2.5 * MINUTE + 7));
    const two = { ...one.sealer };
    const runs = await Promise.all([
      sealClosedWindows(one.sealer, settings),
      sealClosedWindows(two, settings),
    ]);
    const after = await sealClosedWindows(one.sealer, settings);
    expect(runs[0].sealed + runs[1].sealed + after.sealed).toBe(6);
    expect(await seals(one.archive)).toHaveLength(6);
    const report = await verifyArchive(one.archive, {
      from: DAY,
      to: DAY + 30 * MINUTE,
      publicKey: keys.publicKey,
      lateAfterMs: 20 * MINUTE,
    });
    expect(report).toMatchObject({ windows: 6, records: 12, problems: [] });
  });

  it('stops when the seal head was moved: to the future, off the seals, or to another head', async () => {
    const { sealer } = parts(closesAt(2));
    await sealClosedWindows(sealer, settings);
    const last = (await sealer.heads.read()) as SealHead;
    const movedTo = (head: SealHead) => ({
      ...sealer,
      heads: { read: async () => head, advance: async () => true },
    });
    for (const [head, why] of [
      [
        { ...last, end: closesAt(2) + 86_400_000 - ((closesAt(2) + 86_400_000) % 60_000) },
        'is in the future',
      ],
      [{ ...last, end: last.end - 3 * MINUTE }, 'ends where no seal of the archive ends'],
      [{ ...last, end: last.end + 1 }, 'is not on a minute'],
      [{ ...last, head: 'ab'.repeat(32) }, "does not hold its last seal's head"],
    ] as const) {
      await expect(sealClosedWindows(movedTo(head), settings)).rejects.toThrow(why);
    }
    expect((await sealClosedWindows(movedTo(last), settings)).sealed).toBe(0);
  });

  it('adopts a seal another sealer wrote only when it is this very seal but for its time', async () => {
    const other = parts(closesAt(0));
    await sealClosedWindows(other.sealer, settings);
    const held = sealOfBody((await other.archive.read(sealKey(DAY))) as Buffer);
    // The same head, previous and count, but another window's bounds (a sealer on another grid).
    let held2: SealHead | undefined;
    const memory: SealHeadStore = {
      read: async () => held2,
      advance: async (_from, to) => {
        held2 = to;
        return true;
      },
    };
    const { archive, sealer } = parts(closesAt(0), { heads: memory });
    await archive.create(
      sealKey(DAY),
      sealBody({
        seal: { ...held?.seal, window_end: new Date(DAY + 10 * MINUTE).toISOString() } as AuditSeal,
        signature: held?.signature as string,
      }),
      undefined,
    );
    await expect(sealClosedWindows(sealer, settings)).rejects.toThrow(
      "is not this chain's seal of the window",
    );
  });

  it('holds the table against the sealed copies: a record deleted is told apart from one expired by TTL', async () => {
    const { ring, archive, sealer } = parts(closesAt(0));
    const old = auditRecord(DAY + 1_000);
    const young = auditRecord(DAY + 2_000);
    const kept = auditRecord(DAY + 3_000);
    for (const record of [old, young, kept]) await ring.create(record);
    await sealClosedWindows(sealer, settings);
    const added = auditRecord(DAY + 4_000);
    const edited = { ...kept, method: 'unlink' };
    // 30 days of retention: `old` is past it (gone by TTL), `young` is not (deleted by hand).
    const now = Date.parse(young.time) + 30 * 86_400_000 - 500;
    const table = (records: AuditRecord[] | Error) => ({
      source: {
        readWindow: async () => {
          if (records instanceof Error) throw records;
          return records;
        },
      },
      retentionDays: 30,
      now,
    });
    const options = { from: DAY, to: DAY + 5 * MINUTE, publicKey: keys.publicKey, lateAfterMs: 20 * MINUTE };
    const report = await verifyArchive(archive, { ...options, table: table([edited, added]) });
    const at = new Date(DAY).toISOString();
    expect(report.problems).toEqual([
      { kind: 'table_deleted', window: at, audit_id: young.audit_id },
      { kind: 'table_changed', window: at, audit_id: kept.audit_id },
      { kind: 'table_inserted', window: at, audit_id: added.audit_id },
    ]);
    expect(report.notices).toContainEqual({ kind: 'table_expired', window: at, audit_id: old.audit_id });
    expect(report.problems.map(describeFinding)).toEqual([
      `window ${at}: record ${young.audit_id} was deleted from the table before its retention ended`,
      `window ${at}: record ${kept.audit_id} was edited in the table after sealing`,
      `window ${at}: record ${added.audit_id} is in the table but not in the sealed window`,
    ]);
    const unreadable = await verifyArchive(archive, { ...options, table: table(new Error('throttled')) });
    expect(unreadable.problems).toEqual([{ kind: 'table_unreadable', window: at, reason: 'throttled' }]);
    expect(describeFinding(unreadable.problems[0] as ArchiveProblem)).toBe(
      `window ${at}: the table could not be read (throttled)`,
    );
  });

  it('refuses to seal over a records object that holds other records', async () => {
    const { ring, archive, sealer } = parts(closesAt(0));
    await ring.create(auditRecord(DAY + 1_000));
    await archive.create(
      recordsKey(DAY),
      recordsBody([canonicalJsonOf(auditRecord(DAY + 2_000))]),
      undefined,
    );
    await expect(sealClosedWindows(sealer, settings)).rejects.toBeInstanceOf(SealConflict);
    expect(await seals(archive)).toEqual([]);
  });

  it('publishes its public key once, under its id, read-only', async () => {
    const { dir, archive, sealer } = parts(closesAt(0));
    await sealClosedWindows(sealer, settings);
    await sealClosedWindows(sealer, settings);
    const id = keyIdOf(keys.publicKey);
    expect((await archive.read(publicKeyKey(id)))?.toString()).toBe(
      keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    );
    expect(readdirSync(join(dir, 'keys'))).toEqual([`${id}.pem`]);
    expect(() => readFileSync(join(dir, 'keys', `${id}.pem`))).not.toThrow();
  });
});
