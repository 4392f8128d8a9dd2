/**
 * @module platform/audit/seal-layout
 * Where sealed audit windows live and when a window may be sealed (docs/guide/audit.md, "Sealed").
 * The same layout in the stack's S3 bucket and in a local run's `AUDIT_DIR`, laid out for Athena's
 * partition projection:
 *
 * - `records/year=YYYY/month=MM/day=DD/<window>.jsonl`: a window's records, one canonical JSON line
 *   each, in chain order (a window without records has no records object);
 * - `seals/year=YYYY/month=MM/day=DD/<window>.json`: its seal and signature, `{"seal":…,"signature":…}`;
 * - `keys/<key id>.pem`: the public key (SPKI, PEM) the seals name.
 *
 * `<window>` is the window's start, `YYYYMMDDTHHMMSSZ`. Windows are `AUDIT_SEAL_MINUTES` long and
 * aligned to the hour, so none spans two UTC days (its records are in one day's partitions).
 */
import type { AuditSeal, SealedWindow } from './audit-chain.ts';
import type { SealArchive } from './seal-archive.ts';

/**
 * A margin past the writers' own (`AUDIT_PENDING_AFTER`, their timeout and 30 s): a window is
 * sealed once every record in it is past the time its writer could still write it, and this more.
 */
export const SEAL_MARGIN_MS = 30_000;
/** Windows one run seals at most: a day of 5-minute windows; a run that stops there is followed by the next. */
export const MAX_WINDOWS_PER_RUN = 288;

/** A window [start, end), epoch ms. */
export interface SealWindow {
  readonly start: number;
  readonly end: number;
}

/** The window `ms` falls in. */
export function windowOf(ms: number, minutes: number): SealWindow {
  const length = minutes * 60_000;
  const start = Math.floor(ms / length) * length;
  return { start, end: start + length };
}

/** How long after its end a window may be sealed: the writers' pending time and {@link SEAL_MARGIN_MS}. */
export function sealDelayMs(pendingAfterMs: number): number {
  return pendingAfterMs + SEAL_MARGIN_MS;
}

/** Whether no record of `window` can still change at `now`. */
export function isClosed(window: SealWindow, now: number, pendingAfterMs: number): boolean {
  return now >= window.end + sealDelayMs(pendingAfterMs);
}

/**
 * Where the first window starts when nothing is sealed yet: the window that closed last before
 * `now` (the sealer's first run). The stack's schedule first runs within a window of the deploy,
 * so it covers every record since; records of earlier windows (a table kept from before sealing)
 * are not sealed.
 */
export function genesisStart(now: number, minutes: number, pendingAfterMs: number): number {
  return windowOf(now - sealDelayMs(pendingAfterMs), minutes).start - minutes * 60_000;
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** A window's name: its start, `YYYYMMDDTHHMMSSZ`. */
export function windowName(start: number): string {
  const at = new Date(start);
  return (
    `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}` +
    `T${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}Z`
  );
}

/** The start a window's name gives, or `undefined` for another name. */
export function startOfName(name: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(name);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const ms = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
  return windowName(ms) === name ? ms : undefined;
}

function dayPath(start: number): string {
  const at = new Date(start);
  return `year=${at.getUTCFullYear()}/month=${pad(at.getUTCMonth() + 1)}/day=${pad(at.getUTCDate())}`;
}

/** The two kinds of window objects. */
export const SEAL_PREFIXES = Object.freeze({ records: 'records/', seals: 'seals/', keys: 'keys/' });

/** The key of a window's records object. */
export function recordsKey(start: number): string {
  return `${SEAL_PREFIXES.records}${dayPath(start)}/${windowName(start)}.jsonl`;
}

/** The key of a window's seal object. */
export function sealKey(start: number): string {
  return `${SEAL_PREFIXES.seals}${dayPath(start)}/${windowName(start)}.json`;
}

/** The key of a public key's object. */
export function publicKeyKey(keyId: string): string {
  return `${SEAL_PREFIXES.keys}${keyId}.pem`;
}

/** The window start a seal or records key names, or `undefined` for another key. */
export function startOfKey(key: string): number | undefined {
  const match = /^(?:records|seals)\/year=\d{4}\/month=\d{2}\/day=\d{2}\/(\w+)\.jsonl?$/.exec(key);
  const start = match === null ? undefined : startOfName(match[1] as string);
  if (start === undefined) return undefined;
  return key === recordsKey(start) || key === sealKey(start) ? start : undefined;
}

/** The body of a records object: the lines, each ended by a newline. */
export function recordsBody(lines: readonly string[]): Buffer {
  return Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');
}

/** The lines of a records object's body. */
export function linesOf(body: Buffer): string[] {
  const text = body.toString('utf8');
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** The body of a seal object. */
export function sealBody(window: Pick<SealedWindow, 'seal' | 'signature'>): Buffer {
  return Buffer.from(
    `${JSON.stringify({ seal: window.seal, signature: window.signature }, null, 2)}\n`,
    'utf8',
  );
}

/** A seal object's seal and signature, or `undefined` when it does not read as one. */
export function sealOfBody(
  body: Buffer,
): { readonly seal: AuditSeal; readonly signature: string } | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { seal?: AuditSeal; signature?: unknown };
    const { seal, signature } = parsed;
    if (typeof signature !== 'string' || typeof seal !== 'object' || seal === null) return undefined;
    if (typeof seal.window_start !== 'string' || typeof seal.head !== 'string') return undefined;
    return { seal, signature };
  } catch {
    return undefined;
  }
}

/**
 * The seal of `archive` whose window ends at `end`: a window of `minutes` first, then of any length
 * from 1 to 60 minutes (windows of another `AUDIT_SEAL_MINUTES`); `undefined` when there is none.
 */
export async function sealEndingAt(
  archive: Pick<SealArchive, 'read'>,
  end: number,
  minutes = 1,
): Promise<{ readonly seal: AuditSeal; readonly signature: string } | undefined> {
  for (const length of new Set([minutes, ...Array.from({ length: 60 }, (_, i) => i + 1)])) {
    const body = await archive.read(sealKey(end - length * 60_000));
    const held = body === undefined ? undefined : sealOfBody(body);
    if (held !== undefined && Date.parse(held.seal.window_end) === end) return held;
  }
  return undefined;
}
