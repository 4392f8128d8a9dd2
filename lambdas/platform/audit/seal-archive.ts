/**
 * @module platform/audit/seal-archive
 * Where sealed windows are kept (docs/guide/audit.md, "Sealed"): the port the sealer writes through
 * and `npm run audit-log -- verify` reads through. The stack's S3 bucket with Object Lock
 * (seal-archive-s3.ts) or a local directory laid out the same way (seal-archive-dir.ts). Keys:
 * seal-layout.ts.
 *
 * An object is created once and never replaced: {@link SealArchive.create} writes only where no
 * object has the key (S3's `If-None-Match: *`, a directory's exclusive link), so two sealers cannot
 * overwrite each other, and a second version of an object is tampering.
 */

/** What the archive knows of one object: its versions and its lock. */
export interface ArchivedObject {
  readonly key: string;
  /** Versions of the key (S3 keeps every one in a versioned bucket; a directory has one). */
  readonly versions: number;
  /** Whether the key's latest version is a delete marker (the object reads as deleted). */
  readonly deleted: boolean;
  /** The Object Lock mode and date of the current version, when the archive locks objects. */
  readonly lock?: { readonly mode: string; readonly until: string };
}

export interface SealArchive {
  /** Where it is, for a report: `s3://bucket` or a directory. */
  readonly where: string;
  /** Whether its objects carry an Object Lock retention (the bucket's), which `verify` then checks. */
  readonly locks: boolean;
  /** The Object Lock mode its objects are written with, and `verify` expects (`compliance`, `governance`). */
  readonly lockMode?: string;
  /**
   * Writes `body` under `key` where no object has it, locked until `lockUntil` (when the archive
   * locks): `written`, or `exists` when an object was there (never replaced).
   */
  create(key: string, body: Buffer, lockUntil: Date | undefined): Promise<'written' | 'exists'>;
  /** The current version's body, or `undefined` when there is none. */
  read(key: string): Promise<Buffer | undefined>;
  /** Every key under `prefix` (delete markers included), with its versions and lock. */
  list(prefix: string): Promise<ArchivedObject[]>;
  /**
   * Extends the lock of `key`'s current version to `until` (never shortens it), where the archive
   * locks: the public key stays locked as long as the newest seals that name it.
   */
  extendLock?(key: string, until: Date): Promise<void>;
}

/** The archive refused or failed a write or a read (not: an object already there). */
export class SealArchiveError extends Error {
  override readonly name = 'SealArchiveError';
}
