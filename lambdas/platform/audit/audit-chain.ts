/**
 * @module platform/audit/audit-chain
 * The hash chain and seals of the audit (issue 57, first part: the sealer, its bucket and
 * `npm run audit-log -- verify` build on it). A closed time window's records, each in its
 * canonical JSON (RFC 8785), are hashed in (`time`, `audit_id`) order into a chain that starts from
 * the previous seal's head; the window's seal (its bounds, count, first and last ids, the chain's
 * head, the previous head, when it was sealed, whether the audit was on, the signing key's id) is
 * signed (ECDSA P-256, SHA-256: what a KMS `ECC_NIST_P256` key signs with `ECDSA_SHA_256`, a DER
 * signature). {@link verifyWindows} recomputes every head, checks every signature (verified, never
 * compared: ECDSA signatures are randomized) and names what does not hold.
 *
 * The chain: `head = SHA-256(previous head bytes || SHA-256(line))` per record, hex; a window
 * without records keeps the previous head (its seal, count 0, still says the window was sealed).
 */
import { createHash, type KeyObject, sign, verify } from 'node:crypto';
import { canonicalJsonOf } from '../canonical-json.ts';
import type { AuditRecord } from './audit-record.ts';

/** The seal format's version. */
export const SEAL_SCHEMA_VERSION = 1;
/** The head the first window chains from. */
export const GENESIS_HEAD = '0'.repeat(64);

/** One sealed window's seal. */
export interface AuditSeal {
  readonly schema: typeof SEAL_SCHEMA_VERSION;
  /** The window [start, end), UTC ISO 8601 with milliseconds. */
  readonly window_start: string;
  readonly window_end: string;
  readonly count: number;
  readonly first_audit_id: string | null;
  readonly last_audit_id: string | null;
  /** The chain's head after the window's last record (the previous head when it has none). */
  readonly head: string;
  /** The previous window's head ({@link GENESIS_HEAD} for the first). */
  readonly previous: string;
  readonly sealed_at: string;
  readonly audit_on: boolean;
  /** The signing key's id (a hash of its public key: {@link keyIdOf}). */
  readonly key_id: string;
}

/** A sealed window: its records' lines as hashed, its seal and the seal's signature (base64 DER). */
export interface SealedWindow {
  readonly lines: readonly string[];
  readonly seal: AuditSeal;
  readonly signature: string;
}

const sha256 = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();

/** The head after `lines`, chained from `previous` (hex). */
export function chainHead(previous: string, lines: readonly string[]): string {
  let head: Buffer = Buffer.from(previous, 'hex');
  for (const line of lines) head = sha256(Buffer.concat([head, sha256(Buffer.from(line, 'utf8'))]));
  return head.toString('hex');
}

/** A window's records in chain order: by `time`, then `audit_id`. */
export function chainOrder(records: readonly AuditRecord[]): AuditRecord[] {
  return [...records].sort((a, b) =>
    a.time < b.time
      ? -1
      : a.time > b.time
        ? 1
        : a.audit_id < b.audit_id
          ? -1
          : a.audit_id > b.audit_id
            ? 1
            : 0,
  );
}

/** A public key's fingerprint, as an auditor pins it: the hex SHA-256 of its SPKI DER. */
export function fingerprintOf(publicKey: KeyObject): string {
  return sha256(publicKey.export({ type: 'spki', format: 'der' })).toString('hex');
}

/** The id of a signing key, which each seal names: its fingerprint's first 16 bytes (32 hex digits). */
export function keyIdOf(publicKey: KeyObject): string {
  return fingerprintOf(publicKey).slice(0, 32);
}

/**
 * What signs seals: the local sealer's P-256 key (seal-signer-local.ts) or the stack's KMS key
 * (seal-signer-kms.ts). `sign` gives a DER ECDSA signature over SHA-256 of the bytes.
 */
export interface SealSigner {
  /** The public key the signatures verify with. */
  publicKey(): Promise<KeyObject>;
  sign(bytes: Buffer): Promise<Buffer>;
}

/** A signer of a key pair held in process (the local sealer's, the tests'). */
export function keyPairSigner(keys: {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}): SealSigner {
  return {
    publicKey: async () => keys.publicKey,
    sign: async (bytes) => sign('sha256', bytes, keys.privateKey),
  };
}

/** The bytes a seal's signature covers: its canonical JSON. */
export function sealBytes(seal: AuditSeal): Buffer {
  return Buffer.from(canonicalJsonOf(seal), 'utf8');
}

/** A window's lines and its unsigned seal: what {@link sealWindow} signs. */
export function windowSeal(
  window: { readonly start: number; readonly end: number; readonly auditOn: boolean },
  records: readonly AuditRecord[],
  previous: string,
  keyId: string,
  sealedAt: number,
): { readonly lines: readonly string[]; readonly seal: AuditSeal } {
  const ordered = chainOrder(records);
  const lines = ordered.map(canonicalJsonOf);
  const seal: AuditSeal = {
    schema: SEAL_SCHEMA_VERSION,
    window_start: new Date(window.start).toISOString(),
    window_end: new Date(window.end).toISOString(),
    count: lines.length,
    first_audit_id: ordered[0]?.audit_id ?? null,
    last_audit_id: ordered.at(-1)?.audit_id ?? null,
    head: chainHead(previous, lines),
    previous,
    sealed_at: new Date(sealedAt).toISOString(),
    audit_on: window.auditOn,
    key_id: keyId,
  };
  return { lines, seal };
}

/** Seals a window's records (in any order) after `previous`, signed by `signer`. */
export async function sealWindow(
  window: { readonly start: number; readonly end: number; readonly auditOn: boolean },
  records: readonly AuditRecord[],
  previous: string,
  signer: SealSigner,
  sealedAt: number,
): Promise<SealedWindow> {
  const keyId = keyIdOf(await signer.publicKey());
  const { lines, seal } = windowSeal(window, records, previous, keyId, sealedAt);
  const signature = (await signer.sign(sealBytes(seal))).toString('base64');
  return { lines, seal, signature };
}

/** Whether `signature` (base64 DER) is `publicKey`'s over `seal` (verified, never compared). */
export function sealSigned(seal: AuditSeal, signature: string, publicKey: KeyObject): boolean {
  try {
    return verify('sha256', sealBytes(seal), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** What {@link verifyWindows} found wrong, naming the window (its start) and, where it can, the record. */
export type ChainProblem =
  | { readonly kind: 'signature'; readonly window: string }
  | { readonly kind: 'wrong_key'; readonly window: string }
  | { readonly kind: 'records_removed' | 'records_inserted'; readonly window: string; readonly count: number }
  | { readonly kind: 'reordered'; readonly window: string; readonly audit_id: string }
  | { readonly kind: 'record_changed'; readonly window: string }
  | { readonly kind: 'chain_broken'; readonly window: string }
  | { readonly kind: 'window_missing'; readonly from: string; readonly to: string };

/** What a verification found: the windows and records that hold, and every problem, named. */
export interface ChainReport {
  readonly windows: number;
  readonly records: number;
  readonly problems: readonly ChainProblem[];
}

/** The `audit_id` of a line, or `undefined` when it is not a record. */
function idOfLine(line: string): { readonly id: string; readonly time: string } | undefined {
  try {
    const record = JSON.parse(line) as Partial<AuditRecord>;
    return typeof record.audit_id === 'string' && typeof record.time === 'string'
      ? { id: record.audit_id, time: record.time }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies sealed windows (in any order) with the public key: each seal's signature and key, its
 * records against its count, order and head, each window chained to the one before, no gap between
 * windows. Names every problem; a window that holds counts its records as verified.
 */
export function verifyWindows(windows: readonly SealedWindow[], publicKey: KeyObject): ChainReport {
  const problems: ChainProblem[] = [];
  const keyId = keyIdOf(publicKey);
  const ordered = [...windows].sort((a, b) => (a.seal.window_start < b.seal.window_start ? -1 : 1));
  let records = 0;
  let verified = 0;
  let before: AuditSeal | undefined;
  for (const window of ordered) {
    const { seal, lines } = window;
    const at = seal.window_start;
    let holds = true;
    if (seal.key_id !== keyId) {
      problems.push({ kind: 'wrong_key', window: at });
      holds = false;
    }
    if (!sealSigned(seal, window.signature, publicKey)) {
      problems.push({ kind: 'signature', window: at });
      holds = false;
    }
    if (lines.length < seal.count) {
      problems.push({ kind: 'records_removed', window: at, count: seal.count - lines.length });
      holds = false;
    } else if (lines.length > seal.count) {
      problems.push({ kind: 'records_inserted', window: at, count: lines.length - seal.count });
      holds = false;
    }
    const ids = lines.map(idOfLine);
    for (let i = 1; i < ids.length; i += 1) {
      const [prev, next] = [ids[i - 1], ids[i]];
      if (prev === undefined || next === undefined) continue;
      if (prev.time > next.time || (prev.time === next.time && prev.id > next.id)) {
        problems.push({ kind: 'reordered', window: at, audit_id: next.id });
        holds = false;
        break;
      }
    }
    if (holds && chainHead(seal.previous, lines) !== seal.head) {
      problems.push({ kind: 'record_changed', window: at });
      holds = false;
    }
    if (before !== undefined) {
      if (seal.previous !== before.head) {
        problems.push({ kind: 'chain_broken', window: at });
        holds = false;
      }
      if (seal.window_start !== before.window_end) {
        problems.push({ kind: 'window_missing', from: before.window_end, to: seal.window_start });
      }
    }
    if (holds) {
      verified += 1;
      records += lines.length;
    }
    before = seal;
  }
  return { windows: verified, records, problems };
}
