/**
 * @module platform/audit/seal-windows
 * The sealer (docs/guide/audit.md, "Sealed"): seals every closed window in order, from where the
 * seal head is. The stack's scheduled function runs it every `AUDIT_SEAL_MINUTES`, a local run on a
 * timer (`npm start`) and `npm run audit-log -- seal` now; each with its own parts (the table or the
 * embedded ring, the S3 bucket or `AUDIT_DIR`, KMS or a local key), the same steps:
 *
 * 1. a window [start, end) is taken once it is closed: now ≥ end + the writers' pending time
 *    (`AUDIT_PENDING_AFTER`) + a margin, so no writer can still change a record of it;
 * 2. it is read whole (strongly consistent); a record still `pending` is completed as `unknown`
 *    (conditionally: a record that ended meanwhile keeps its end), and the window read again, so the
 *    completion is what is sealed;
 * 3. its records, in (`time`, `audit_id`) order as canonical JSON, are chained from the previous
 *    seal's head and the seal signed (audit-chain.ts);
 * 4. the records object, then the seal object, are created where none is, locked; an object a
 *    concurrent sealer created first is read back and must hold the same records (and a seal of the
 *    same head, signed by the same key), else the run stops with {@link SealConflict};
 * 5. the seal head advances only from the head this run read: a second sealer that finds it moved
 *    stops (the chain is the other's), so a window is sealed once.
 *
 * An empty window is sealed too (count 0, no records object), so a missing window is visible.
 */

import { canonicalJsonOf } from '../canonical-json.ts';
import {
  GENESIS_HEAD,
  keyIdOf,
  type SealedWindow,
  type SealSigner,
  sealSigned,
  sealWindow,
} from './audit-chain.ts';
import { type AuditRecord, asRead } from './audit-record.ts';
import type { AuditWindowReader } from './audit-store.ts';
import type { SealArchive } from './seal-archive.ts';
import type { SealHead, SealHeadStore } from './seal-head.ts';
import {
  genesisStart,
  isClosed,
  MAX_WINDOWS_PER_RUN,
  publicKeyKey,
  recordsBody,
  recordsKey,
  sealBody,
  sealEndingAt,
  sealKey,
  sealOfBody,
  windowOf,
} from './seal-layout.ts';

/** What the sealer works with. */
export interface SealerParts {
  readonly source: AuditWindowReader;
  /** Writes a stale `pending` record's end as `unknown` where it is still pending (the writers' `finish`). */
  readonly complete: (record: AuditRecord) => Promise<boolean>;
  readonly heads: SealHeadStore;
  readonly archive: SealArchive;
  readonly signer: SealSigner;
  readonly now: () => number;
}

/** How it seals. */
export interface SealerSettings {
  /** `AUDIT_SEAL_MINUTES`. */
  readonly minutes: number;
  /** `AUDIT_PENDING_AFTER` in ms: the writers' timeout and their margin. */
  readonly pendingAfterMs: number;
  /** Whether the audit is on (`AUDIT` is not `off`): each seal says so. */
  readonly auditOn: boolean;
  /** `AUDIT_RETENTION_DAYS`: the daily verification tells a record expired from one deleted. */
  readonly retentionDays?: number;
  /** Days each object is locked from its sealing (the bucket's); `undefined`: the archive does not lock. */
  readonly lockDays: number | undefined;
  /** Where the first window starts when nothing is sealed (default: seal-layout.ts `genesisStart`). */
  readonly genesis?: number;
  /** Windows one run seals at most (default {@link MAX_WINDOWS_PER_RUN}). */
  readonly maxWindows?: number;
}

/** What a run did. */
export interface SealRun {
  readonly sealed: number;
  /** The last sealed window's end and head after the run (`undefined`: nothing sealed yet). */
  readonly head: SealHead | undefined;
  /** Minutes from the last sealed window's end to now (`undefined`: nothing sealed yet). */
  readonly lagMinutes: number | undefined;
  /** Why it stopped: no closed window left, its bound, or another sealer moved the head. */
  readonly stopped: 'caught_up' | 'bound' | 'other_sealer';
}

/** An object of the archive holds what this sealer did not make, or the table changed under a seal. */
export class SealConflict extends Error {
  override readonly name = 'SealConflict';
}

/** A window's records, whole, its stale pending ones completed as `unknown` first. */
async function settledRecords(
  parts: SealerParts,
  window: { readonly start: number; readonly end: number },
  pendingAfterMs: number,
): Promise<AuditRecord[]> {
  const records = await parts.source.readWindow(window.start, window.end);
  const now = parts.now();
  const stale = records.filter((record) => record.outcome === 'pending');
  if (stale.length === 0) return records;
  for (const record of stale) await parts.complete(asRead(record, Number.POSITIVE_INFINITY, 0));
  const again = await parts.source.readWindow(window.start, window.end);
  const still = again.find((record) => asRead(record, now, pendingAfterMs).outcome === 'pending');
  if (still !== undefined) throw new SealConflict(`audit record ${still.audit_id} is still pending`);
  return again;
}

/** Writes `body` under `key`, or finds the same bytes there. */
async function createOrSame(archive: SealArchive, key: string, body: Buffer, lockUntil: Date | undefined) {
  if ((await archive.create(key, body, lockUntil)) === 'written') return;
  const held = await archive.read(key);
  if (held === undefined) {
    throw new SealConflict(
      `${key} in ${archive.where} is being written by another sealer: the next run goes on`,
    );
  }
  if (!held.equals(body)) {
    throw new SealConflict(`${key} in ${archive.where} holds other records than the table's`);
  }
}

/** Writes the window's seal, or adopts one a concurrent sealer wrote of the same head and key. */
async function createSeal(
  parts: SealerParts,
  sealed: SealedWindow,
  lockUntil: Date | undefined,
): Promise<SealedWindow> {
  const key = sealKey(Date.parse(sealed.seal.window_start));
  if ((await parts.archive.create(key, sealBody(sealed), lockUntil)) === 'written') return sealed;
  const body = await parts.archive.read(key);
  const held = body === undefined ? undefined : sealOfBody(body);
  const publicKey = await parts.signer.publicKey();
  // The same seal but for when it was made: bounds, count, ids, heads, audit and key.
  const same =
    held !== undefined &&
    canonicalJsonOf({ ...held.seal, sealed_at: '' }) === canonicalJsonOf({ ...sealed.seal, sealed_at: '' });
  if (held === undefined || !same || !sealSigned(held.seal, held.signature, publicKey)) {
    throw new SealConflict(`${key} in ${parts.archive.where} is not this chain's seal of the window`);
  }
  return { lines: sealed.lines, ...held };
}

/** Writes the signer's public key (SPKI PEM) under its id, once, locked. */
async function publishPublicKey(parts: SealerParts, lockUntil: Date | undefined): Promise<void> {
  const publicKey = await parts.signer.publicKey();
  const pem = Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'utf8');
  await createOrSame(parts.archive, publicKeyKey(keyIdOf(publicKey)), pem, lockUntil);
}

/**
 * The seal head must be where a seal of the archive ends, with that seal's head: a head item moved
 * (to the future, off the grid, or to a head no seal has) would skip windows or fork the chain, so
 * the run stops ({@link SealConflict}: the sealer's errors and lag alarms fire).
 */
async function checkHead(parts: SealerParts, head: SealHead, minutes: number): Promise<void> {
  const moved = (why: string) =>
    new SealConflict(
      `the seal head (${new Date(head.end).toISOString()}) ${why}: restore it from the last seal`,
    );
  if (!Number.isFinite(head.end) || head.end % 60_000 !== 0) throw moved('is not on a minute');
  if (head.end > parts.now()) throw moved('is in the future');
  // The last seal: a window of this length, or (after a change of AUDIT_SEAL_MINUTES) of another.
  const last = await sealEndingAt(parts.archive, head.end, minutes);
  if (last !== undefined) {
    if (last.seal.head !== head.head) throw moved("does not hold its last seal's head");
    return;
  }
  throw moved('ends where no seal of the archive ends');
}

/** Seals every closed window from the seal head on, in order, at most `maxWindows` in one run. */
export async function sealClosedWindows(parts: SealerParts, settings: SealerSettings): Promise<SealRun> {
  const lockUntil = () =>
    settings.lockDays === undefined ? undefined : new Date(parts.now() + settings.lockDays * 86_400_000);
  await publishPublicKey(parts, lockUntil());
  const read = await parts.heads.read();
  if (read !== undefined) await checkHead(parts, read, settings.minutes);
  let head: SealHead = read ?? {
    head: GENESIS_HEAD,
    end:
      settings.genesis === undefined
        ? genesisStart(parts.now(), settings.minutes, settings.pendingAfterMs)
        : windowOf(settings.genesis, settings.minutes).start,
  };
  let from: SealHead | undefined = read;
  let sealed = 0;
  let stopped: SealRun['stopped'] = 'caught_up';
  for (;;) {
    // From the head to the end of its window on the grid: after a change of AUDIT_SEAL_MINUTES the
    // first window is shorter, and none spans two UTC days (minutes divide an hour).
    const window = { start: head.end, end: windowOf(head.end, settings.minutes).end };
    if (!isClosed(window, parts.now(), settings.pendingAfterMs)) break;
    if (sealed === (settings.maxWindows ?? MAX_WINDOWS_PER_RUN)) {
      stopped = 'bound';
      break;
    }
    const records = await settledRecords(parts, window, settings.pendingAfterMs);
    const made = await sealWindow(
      { ...window, auditOn: settings.auditOn },
      records,
      head.head,
      parts.signer,
      parts.now(),
    );
    if (made.lines.length > 0) {
      await createOrSame(parts.archive, recordsKey(window.start), recordsBody(made.lines), lockUntil());
    }
    const kept = await createSeal(parts, made, lockUntil());
    const next: SealHead = { head: kept.seal.head, end: window.end };
    if (!(await parts.heads.advance(from, next, parts.now()))) {
      stopped = 'other_sealer';
      break;
    }
    head = next;
    from = next;
    sealed += 1;
  }
  const last = from;
  return {
    sealed,
    head: last,
    lagMinutes: last === undefined ? undefined : Math.max(0, Math.floor((parts.now() - last.end) / 60_000)),
    stopped,
  };
}
