/**
 * @module platform/audit/audit-verify
 * What `npm run audit-log -- verify` and the daily scheduled verification check (docs/guide/audit.md,
 * "How an auditor checks it"): the sealed windows of an archive (the bucket, or a local directory
 * or export laid out as it), against a public key the auditor trusts.
 *
 * - every object: one version, no delete marker, and (where the archive locks) a lock;
 * - every seal: readable, signed by the trusted key (verified, never compared), its records
 *   object's lines matching its count, order and head, chained to the window before, with no
 *   window missing between two seals, and no records object without its seal;
 * - with the table: each sealed record still in the table as sealed (one edited after sealing is
 *   named; one gone after its retention is told apart from one deleted), and none added since.
 *
 * A window sealed late (its records were editable longer than the sealer's delay) is named as a
 * finding that does not fail the verification: a sealer that was down catches up this way.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalJsonOf } from '../canonical-json.ts';
import { type ChainProblem, GENESIS_HEAD, type SealedWindow, verifyWindows } from './audit-chain.ts';
import type { AuditRecord } from './audit-record.ts';
import type { AuditWindowReader } from './audit-store.ts';
import type { ArchivedObject, SealArchive } from './seal-archive.ts';
import {
  linesOf,
  recordsKey,
  SEAL_PREFIXES,
  sealBody,
  sealEndingAt,
  sealKey,
  sealOfBody,
  startOfKey,
} from './seal-layout.ts';

/** What a verification found besides the chain's own problems (audit-chain.ts `ChainProblem`). */
export type ArchiveProblem =
  | ChainProblem
  | { readonly kind: 'versions'; readonly key: string; readonly versions: number }
  | { readonly kind: 'deleted'; readonly key: string }
  | { readonly kind: 'unlocked'; readonly key: string }
  | { readonly kind: 'lock_mode'; readonly key: string; readonly mode: string }
  | { readonly kind: 'chain_start_missing'; readonly window: string }
  | { readonly kind: 'seal_unreadable'; readonly key: string }
  | { readonly kind: 'seal_missing'; readonly window: string }
  | { readonly kind: 'table_changed' | 'table_deleted'; readonly window: string; readonly audit_id: string }
  | { readonly kind: 'table_inserted'; readonly window: string; readonly audit_id: string }
  | { readonly kind: 'table_unreadable'; readonly window: string; readonly reason: string };

/** What is named without failing the verification. */
export type ArchiveNotice =
  | { readonly kind: 'sealed_late'; readonly window: string; readonly minutes: number }
  | { readonly kind: 'chain_start'; readonly window: string }
  | { readonly kind: 'table_expired'; readonly window: string; readonly audit_id: string };

export interface ArchiveReport {
  readonly where: string;
  readonly from: string;
  readonly to: string;
  /** Windows whose seal and records verify, and their records. */
  readonly windows: number;
  readonly records: number;
  /** Sealed records held against the table (`--table`). */
  readonly tableChecked?: number;
  readonly problems: readonly ArchiveProblem[];
  readonly notices: readonly ArchiveNotice[];
}

export interface VerifyOptions {
  /** Epoch ms: the windows starting at or after `from` and before `to`. */
  readonly from: number;
  readonly to: number;
  /** The key the seals must verify with (the pinned one, checked by the caller). */
  readonly publicKey: KeyObject;
  /** A window sealed more than this after its end is named late. */
  readonly lateAfterMs: number;
  /** Epoch ms: every window up to here (or `to`) should be sealed; one missing at the end is named. */
  readonly sealedUntil?: number;
  /** The live table's records, to hold against the sealed copies. */
  readonly table?: {
    readonly source: AuditWindowReader;
    /** `AUDIT_RETENTION_DAYS`: a record gone after it is expired, not deleted. */
    readonly retentionDays: number;
    readonly now: number;
  };
}

/** The day prefixes (`seals/year=…/month=…/day=…/`) of [from, to). */
function dayPrefixes(prefix: string, from: number, to: number): string[] {
  const prefixes: string[] = [];
  for (let day = Math.floor(from / 86_400_000) * 86_400_000; day < to; day += 86_400_000) {
    const key = sealKey(day);
    prefixes.push(`${prefix}${key.slice(SEAL_PREFIXES.seals.length, key.lastIndexOf('/') + 1)}`);
  }
  return prefixes;
}

async function listDays(archive: SealArchive, prefix: string, from: number, to: number) {
  const objects: ArchivedObject[] = [];
  for (const day of dayPrefixes(prefix, from, to)) objects.push(...(await archive.list(day)));
  return objects.filter((object) => {
    const start = startOfKey(object.key);
    return start !== undefined && start >= from && start < to;
  });
}

function objectProblems(objects: readonly ArchivedObject[], archive: SealArchive): ArchiveProblem[] {
  const problems: ArchiveProblem[] = [];
  for (const object of objects) {
    if (object.deleted) problems.push({ kind: 'deleted', key: object.key });
    if (object.versions > 1) problems.push({ kind: 'versions', key: object.key, versions: object.versions });
    if (archive.locks && !object.deleted && object.lock === undefined) {
      problems.push({ kind: 'unlocked', key: object.key });
    }
    if (
      object.lock !== undefined &&
      archive.lockMode !== undefined &&
      object.lock.mode !== archive.lockMode
    ) {
      problems.push({ kind: 'lock_mode', key: object.key, mode: object.lock.mode });
    }
  }
  return problems;
}

/** The table's records of a window held against its sealed lines. */
async function tableProblems(
  window: SealedWindow,
  table: NonNullable<VerifyOptions['table']>,
): Promise<{ problems: ArchiveProblem[]; notices: ArchiveNotice[]; checked: number }> {
  const at = window.seal.window_start;
  const problems: ArchiveProblem[] = [];
  const notices: ArchiveNotice[] = [];
  let live: AuditRecord[];
  try {
    live = await table.source.readWindow(
      Date.parse(window.seal.window_start),
      Date.parse(window.seal.window_end),
    );
  } catch (error) {
    return {
      problems: [{ kind: 'table_unreadable', window: at, reason: (error as Error).message }],
      notices,
      checked: 0,
    };
  }
  const byId = new Map(live.map((record) => [record.audit_id, record]));
  for (const line of window.lines) {
    const sealed = JSON.parse(line) as AuditRecord;
    const held = byId.get(sealed.audit_id);
    byId.delete(sealed.audit_id);
    if (held === undefined) {
      const expired = Date.parse(sealed.time) + table.retentionDays * 86_400_000 <= table.now;
      if (expired) notices.push({ kind: 'table_expired', window: at, audit_id: sealed.audit_id });
      else problems.push({ kind: 'table_deleted', window: at, audit_id: sealed.audit_id });
    } else if (canonicalJsonOf(held) !== line) {
      problems.push({ kind: 'table_changed', window: at, audit_id: sealed.audit_id });
    }
  }
  for (const id of byId.keys()) problems.push({ kind: 'table_inserted', window: at, audit_id: id });
  return { problems, notices, checked: window.lines.length };
}

/**
 * The ends of the range: the first window chains from the seal before it (or starts the chain:
 * named), and the windows reach as far as they should be sealed by now.
 */
async function endProblems(
  archive: SealArchive,
  windows: readonly SealedWindow[],
  options: VerifyOptions,
  notices: ArchiveNotice[],
): Promise<ArchiveProblem[]> {
  const ordered = [...windows].sort((a, b) => (a.seal.window_start < b.seal.window_start ? -1 : 1));
  const problems: ArchiveProblem[] = [];
  const first = ordered[0];
  if (first !== undefined) {
    const at = first.seal.window_start;
    if (first.seal.previous === GENESIS_HEAD) notices.push({ kind: 'chain_start', window: at });
    else {
      const before = (await sealEndingAt(archive, Date.parse(at)))?.seal;
      if (before === undefined) problems.push({ kind: 'chain_start_missing', window: at });
      else if (before.head !== first.seal.previous) problems.push({ kind: 'chain_broken', window: at });
    }
  }
  if (options.sealedUntil === undefined) return problems;
  const until = Math.min(options.to, options.sealedUntil);
  const reached =
    ordered.at(-1) === undefined
      ? options.from
      : Date.parse((ordered.at(-1) as SealedWindow).seal.window_end);
  if (reached < until) {
    problems.push({
      kind: 'window_missing',
      from: new Date(reached).toISOString(),
      to: new Date(until).toISOString(),
    });
  }
  return problems;
}

/** Verifies the archive's windows of [from, to). */
export async function verifyArchive(archive: SealArchive, options: VerifyOptions): Promise<ArchiveReport> {
  const { from, to } = options;
  const seals = await listDays(archive, SEAL_PREFIXES.seals, from, to);
  const records = await listDays(archive, SEAL_PREFIXES.records, from, to);
  const keys = await archive.list(SEAL_PREFIXES.keys);
  const problems: ArchiveProblem[] = objectProblems([...seals, ...records, ...keys], archive);
  const notices: ArchiveNotice[] = [];
  const recordKeys = new Set(records.filter((object) => !object.deleted).map((object) => object.key));
  const windows: SealedWindow[] = [];
  for (const object of seals) {
    if (object.deleted) continue;
    const body = await archive.read(object.key);
    const held = body === undefined ? undefined : sealOfBody(body);
    // Exactly the bytes the sealer writes, at the key of its own window: nothing another reader
    // could take otherwise (a duplicated member), no seal moved to another window's key.
    if (
      held === undefined ||
      !(body as Buffer).equals(sealBody(held)) ||
      object.key !== sealKey(Date.parse(held.seal.window_start)) ||
      !(Date.parse(held.seal.window_end) > Date.parse(held.seal.window_start))
    ) {
      problems.push({ kind: 'seal_unreadable', key: object.key });
      continue;
    }
    const start = Date.parse(held.seal.window_start);
    const key = recordsKey(start);
    recordKeys.delete(key);
    const recordsBody = await archive.read(key);
    windows.push({ ...held, lines: recordsBody === undefined ? [] : linesOf(recordsBody) });
    const late = Date.parse(held.seal.sealed_at) - Date.parse(held.seal.window_end);
    if (late > options.lateAfterMs) {
      notices.push({
        kind: 'sealed_late',
        window: held.seal.window_start,
        minutes: Math.floor(late / 60_000),
      });
    }
  }
  for (const key of recordKeys) {
    problems.push({ kind: 'seal_missing', window: new Date(startOfKey(key) as number).toISOString() });
  }
  const chain = verifyWindows(windows, options.publicKey);
  problems.push(...chain.problems);
  problems.push(...(await endProblems(archive, windows, options, notices)));
  let tableChecked: number | undefined;
  if (options.table !== undefined) {
    tableChecked = 0;
    for (const window of windows) {
      const found = await tableProblems(window, options.table);
      problems.push(...found.problems);
      notices.push(...found.notices);
      tableChecked += found.checked;
    }
  }
  return {
    where: archive.where,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    windows: chain.windows,
    records: chain.records,
    ...(tableChecked === undefined ? {} : { tableChecked }),
    problems,
    notices,
  };
}

/** One line naming a problem or a notice, for a person. */
export function describeFinding(finding: ArchiveProblem | ArchiveNotice): string {
  switch (finding.kind) {
    case 'signature':
      return `window ${finding.window}: the seal's signature does not verify (the seal was changed)`;
    case 'wrong_key':
      return `window ${finding.window}: sealed by another key than the trusted one`;
    case 'records_removed':
      return `window ${finding.window}: ${finding.count} record(s) removed`;
    case 'records_inserted':
      return `window ${finding.window}: ${finding.count} record(s) inserted`;
    case 'reordered':
      return `window ${finding.window}: records reordered (at ${finding.audit_id})`;
    case 'record_changed':
      return `window ${finding.window}: a record was changed (its chain does not reach the seal's head)`;
    case 'chain_broken':
      return `window ${finding.window}: the chain is broken (the seal does not follow the window before)`;
    case 'window_missing':
      return `windows missing from ${finding.from} to ${finding.to} (no seal)`;
    case 'versions':
      return `${finding.key}: ${finding.versions} versions (an object was replaced)`;
    case 'deleted':
      return `${finding.key}: deleted (a delete marker is its latest version)`;
    case 'unlocked':
      return `${finding.key}: no Object Lock retention`;
    case 'lock_mode':
      return `${finding.key}: locked in ${finding.mode} mode, not the archive's`;
    case 'chain_start_missing':
      return `window ${finding.window}: the seal before it is missing (windows deleted before the range)`;
    case 'chain_start':
      return `window ${finding.window}: the chain starts here (the sealer's first window, or its head was reset)`;
    case 'seal_unreadable':
      return `${finding.key}: not a seal as the sealer writes it (changed, or moved from another window)`;
    case 'seal_missing':
      return `window ${finding.window}: records without a seal`;
    case 'table_changed':
      return `window ${finding.window}: record ${finding.audit_id} was edited in the table after sealing`;
    case 'table_deleted':
      return `window ${finding.window}: record ${finding.audit_id} was deleted from the table before its retention ended`;
    case 'table_inserted':
      return `window ${finding.window}: record ${finding.audit_id} is in the table but not in the sealed window`;
    case 'table_unreadable':
      return `window ${finding.window}: the table could not be read (${finding.reason})`;
    case 'sealed_late':
      return `window ${finding.window}: sealed ${finding.minutes} minutes after its end (its records were editable that long)`;
    case 'table_expired':
      return `window ${finding.window}: record ${finding.audit_id} left the table at its retention's end (TTL)`;
  }
}
