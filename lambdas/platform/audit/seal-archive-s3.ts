/**
 * @module platform/audit/seal-archive-s3
 * The stack's sealed windows (docs/guide/audit.md, "Sealed"): an S3 bucket with Object Lock,
 * through the AWS SDK's S3 client (the sealer is a scheduled function: no cold start to keep
 * short). Every object is written with `If-None-Match: *` (the bucket policy refuses a write
 * without it) and its own Object Lock retention; a write that finds an object answers 412, which is
 * `exists`, never a replacement.
 *
 * For `verify`: `ListObjectVersions` lists every version and delete marker of a prefix (more than
 * one version of a key, or a delete marker, is tampering), `HeadObject` each object's lock (its `x-amz-object-lock-*` headers).
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  type ObjectLockRetentionMode,
  PutObjectCommand,
  PutObjectRetentionCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type ArchivedObject, type SealArchive, SealArchiveError } from './seal-archive.ts';

/** An SDK error's HTTP status and name. */
function statusOf(error: unknown): { readonly status?: number; readonly name?: string } {
  const held = error as { $metadata?: { httpStatusCode?: number }; name?: string } | undefined;
  return { status: held?.$metadata?.httpStatusCode, name: held?.name };
}

function failed(what: string, error: unknown): SealArchiveError {
  const { status, name } = statusOf(error);
  return new SealArchiveError(`${what}: ${name ?? 'error'}${status === undefined ? '' : ` (${status})`}`, {
    cause: error,
  });
}

export class S3SealArchive implements SealArchive {
  readonly locks = true;
  readonly where: string;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    /** The Object Lock mode the sealer writes (`AUDIT_SEALING`) and `verify` expects. */
    readonly lockMode: 'compliance' | 'governance' = 'compliance',
  ) {
    this.where = `s3://${bucket}`;
  }

  async create(key: string, body: Buffer, lockUntil: Date | undefined): Promise<'written' | 'exists'> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          IfNoneMatch: '*',
          ContentType: key.endsWith('.jsonl')
            ? 'application/x-ndjson'
            : key.endsWith('.pem')
              ? 'application/x-pem-file'
              : 'application/json',
          // Object Lock needs an integrity checksum on the request.
          ChecksumAlgorithm: 'SHA256',
          ...(lockUntil === undefined
            ? {}
            : {
                ObjectLockMode: this.lockMode.toUpperCase() as ObjectLockRetentionMode,
                ObjectLockRetainUntilDate: lockUntil,
              }),
        }),
      );
      return 'written';
    } catch (error) {
      // 412: an object has the key; 409: a concurrent conditional write of the same key won.
      const { status } = statusOf(error);
      if (status === 412 || status === 409) return 'exists';
      throw failed(`cannot write ${key} to ${this.where}`, error);
    }
  }

  async extendLock(key: string, until: Date): Promise<void> {
    try {
      await this.client.send(
        new PutObjectRetentionCommand({
          Bucket: this.bucket,
          Key: key,
          Retention: { Mode: this.lockMode.toUpperCase() as ObjectLockRetentionMode, RetainUntilDate: until },
          ChecksumAlgorithm: 'SHA256',
        }),
      );
    } catch (error) {
      throw failed(`cannot extend the lock of ${key} in ${this.where}`, error);
    }
  }

  async read(key: string): Promise<Buffer | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await answer.Body?.transformToByteArray();
      return bytes === undefined ? Buffer.alloc(0) : Buffer.from(bytes);
    } catch (error) {
      const { status, name } = statusOf(error);
      // No object (never a missing bucket, which is a failure).
      if (name === 'NoSuchKey' || (status === 404 && name !== 'NoSuchBucket')) return undefined;
      throw failed(`cannot read ${key} from ${this.where}`, error);
    }
  }

  async list(prefix: string): Promise<ArchivedObject[]> {
    const byKey = new Map<string, { versions: number; deleted: boolean }>();
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectVersionsCommand({
            Bucket: this.bucket,
            Prefix: prefix,
            ...(keyMarker === undefined ? {} : { KeyMarker: keyMarker }),
            ...(versionMarker === undefined ? {} : { VersionIdMarker: versionMarker }),
          }),
        );
        for (const version of page.Versions ?? []) {
          if (version.Key === undefined) continue;
          const held = byKey.get(version.Key) ?? { versions: 0, deleted: false };
          held.versions += 1;
          byKey.set(version.Key, held);
        }
        for (const marker of page.DeleteMarkers ?? []) {
          if (marker.Key === undefined) continue;
          const held = byKey.get(marker.Key) ?? { versions: 0, deleted: false };
          if (marker.IsLatest === true) held.deleted = true;
          else held.versions += 1;
          byKey.set(marker.Key, held);
        }
        const more = page.IsTruncated === true;
        keyMarker = more ? page.NextKeyMarker : undefined;
        versionMarker = more ? page.NextVersionIdMarker : undefined;
      } while (keyMarker !== undefined);
    } catch (error) {
      throw failed(`cannot list ${prefix} in ${this.where}`, error);
    }
    const objects: ArchivedObject[] = [];
    for (const [key, held] of [...byKey].sort(([a], [b]) => (a < b ? -1 : 1))) {
      objects.push({ key, ...held, ...(held.deleted ? {} : await this.#lock(key)) });
    }
    return objects;
  }

  async #lock(key: string): Promise<Pick<ArchivedObject, 'lock'>> {
    try {
      // HeadObject answers the current version's lock to a caller allowed s3:GetObjectRetention.
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const { ObjectLockMode: mode, ObjectLockRetainUntilDate: until } = answer;
      return mode === undefined || until === undefined
        ? {}
        : { lock: { mode: mode.toLowerCase(), until: new Date(until).toISOString() } };
    } catch (error) {
      throw failed(`cannot read the retention of ${key} in ${this.where}`, error);
    }
  }
}
