/**
 * The stack's seal signer and archive against the AWS SDK clients' documented answers
 * (platform/audit/seal-signer-kms.ts, seal-archive-s3.ts, sealer-parts-aws.ts), the clients
 * mocked with aws-sdk-client-mock:
 *
 * - KMS: a local P-256 key stands in for the `ECC_NIST_P256` key. `GetPublicKey` answers its SPKI
 *   DER; `Sign` (`MessageType: DIGEST`, `ECDSA_SHA_256`) signs the 32-byte digest it is given, as
 *   KMS does, never the message. A window sealed through KMS verifies with the local public key.
 *   The public key is read once; a key of another spec is refused; a failed read is not kept.
 * - S3: `PutObject` with `If-None-Match: *`, the Object Lock mode and date and a checksum; 412 and
 *   409 read as `exists`, any other refusal as a SealArchiveError naming the key and the status.
 *   `GetObject`'s body, and a missing key. `ListObjectVersions` over two pages, with versions and
 *   delete markers; `HeadObject` (its lock headers) per live key.
 * - The sealer writing through both into a versioned bucket held in memory, and `verifyArchive`
 *   reading it back: the untouched bucket verifies; a second version of a seal, an object
 *   without retention and a delete marker are each named.
 */
import { createECDH, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  GetPublicKeyCommand,
  type GetPublicKeyCommandOutput,
  KMSClient,
  KMSInternalException,
  SignCommand,
} from '@aws-sdk/client-kms';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandOutput,
  NoSuchKey,
  type ObjectLockRetention,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
// The SDK's own stream mixin (what GetObject's Body is in Node), @smithy/util-stream's before it
// moved into @smithy/core.
import { sdkStreamMixin } from '@smithy/core/serde';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import {
  GENESIS_HEAD,
  keyIdOf,
  type SealedWindow,
  sealWindow,
  verifyWindows,
} from '../../lambdas/platform/audit/audit-chain.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { verifyArchive } from '../../lambdas/platform/audit/audit-verify.ts';
import { SealArchiveError } from '../../lambdas/platform/audit/seal-archive.ts';
import { S3SealArchive } from '../../lambdas/platform/audit/seal-archive-s3.ts';
import { ArchiveSealHead } from '../../lambdas/platform/audit/seal-head.ts';
import {
  publicKeyKey,
  recordsKey,
  SEAL_MARGIN_MS,
  sealKey,
} from '../../lambdas/platform/audit/seal-layout.ts';
import { KmsSealSigner } from '../../lambdas/platform/audit/seal-signer-kms.ts';
import { sealClosedWindows } from '../../lambdas/platform/audit/seal-windows.ts';
import { awsSealerParts } from '../../lambdas/platform/audit/sealer-parts-aws.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { auditRecord } from '../support/audit-records.ts';

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const CLIENT_CONFIG = { region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } };
const KEY_ARN = 'arn:aws:kms:eu-west-1:111122223333:key/0b9b3a1e-5f7c-4d2a-9c1e-2f4a6b8c0d1e';
const BUCKET = 'erp-proxy-seals';
const MINUTE = 60_000;
const DAY = Date.UTC(2026, 11, 7);
const PENDING_MS = 58_000;
const LOCK_UNTIL = new Date(Date.UTC(2028, 0, 11));

// ---------------------------------------------------------------------------------------------
// KMS: a local key that signs a digest as KMS does.

/** P-256's group order. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const bigOf = (bytes: Uint8Array): bigint => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

function powMod(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if ((e & 1n) === 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** A DER INTEGER of a non-negative value. */
function derInteger(value: bigint): Buffer {
  const hex = value.toString(16);
  let bytes = Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
  if ((bytes[0] as number) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/**
 * ECDSA P-256 over a 32-byte digest, as KMS signs with `MessageType: DIGEST` (Node's `sign`
 * always hashes what it is given): r is the x of k·G (ECDH's public key of the private key k),
 * s = k⁻¹(z + r·d) mod n; a DER `SEQUENCE { r, s }`.
 */
function signDigest(digest: Uint8Array, privateKey: KeyObject): Uint8Array {
  const d = bigOf(Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url'));
  const z = bigOf(digest);
  for (;;) {
    const k = bigOf(randomBytes(32)) % P256_N;
    if (k === 0n) continue;
    const nonce = createECDH('prime256v1');
    nonce.setPrivateKey(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'));
    // The uncompressed point: 0x04, x, y.
    const r = bigOf(nonce.getPublicKey().subarray(1, 33)) % P256_N;
    const s = (powMod(k, P256_N - 2n, P256_N) * (z + r * d)) % P256_N;
    if (r === 0n || s === 0n) continue;
    const body = Buffer.concat([derInteger(r), derInteger(s)]);
    return new Uint8Array(Buffer.concat([Buffer.from([0x30, body.length]), body]));
  }
}

const spkiOf = (publicKey: KeyObject) => new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));

/** GetPublicKey's answer for the local key. */
const PUBLIC_KEY_ANSWER: Partial<GetPublicKeyCommandOutput> = {
  KeyId: KEY_ARN,
  PublicKey: spkiOf(keys.publicKey),
  KeySpec: 'ECC_NIST_P256',
  KeyUsage: 'SIGN_VERIFY',
  SigningAlgorithms: ['ECDSA_SHA_256'],
};

/** A KMS client whose key is the local one: GetPublicKey answers `answer`, Sign signs the digest. */
function kmsOf(answer: Partial<GetPublicKeyCommandOutput> = PUBLIC_KEY_ANSWER) {
  const client = new KMSClient(CLIENT_CONFIG);
  const kms = mockClient(client);
  kms.on(GetPublicKeyCommand, { KeyId: KEY_ARN }).resolves(answer);
  kms.on(SignCommand).callsFake((input) => {
    // KMS refuses a DIGEST that is not the algorithm's digest length (ValidationException).
    expect(input).toMatchObject({ KeyId: KEY_ARN, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    expect(input.Message).toHaveLength(32);
    return {
      KeyId: KEY_ARN,
      Signature: signDigest(input.Message as Uint8Array, keys.privateKey),
      SigningAlgorithm: 'ECDSA_SHA_256',
    };
  });
  return { client, kms };
}

describe('the KMS seal signer', () => {
  it('seals windows that verify with the key pair, reading the public key once', async () => {
    const { client, kms } = kmsOf();
    const signer = new KmsSealSigner(client, KEY_ARN);
    const windows: SealedWindow[] = [];
    let previous = GENESIS_HEAD;
    for (const [index, count] of [2, 0, 1].entries()) {
      const start = DAY + index * 5 * MINUTE;
      const records = Array.from({ length: count }, (_, i) => auditRecord(start + 1_000 * (i + 1)));
      const sealed = await sealWindow(
        { start, end: start + 5 * MINUTE, auditOn: true },
        records,
        previous,
        signer,
        start + 10 * MINUTE,
      );
      windows.push(sealed);
      previous = sealed.seal.head;
    }
    expect(verifyWindows(windows, keys.publicKey)).toEqual({ windows: 3, records: 3, problems: [] });
    for (const window of windows) expect(window.seal.key_id).toBe(keyIdOf(keys.publicKey));
    expect(kms.commandCalls(GetPublicKeyCommand).map((call) => call.args[0].input)).toEqual([
      { KeyId: KEY_ARN },
    ]);
    expect(kms.commandCalls(SignCommand)).toHaveLength(3);
    // Concurrent askers share the one read.
    await Promise.all([signer.publicKey(), signer.publicKey()]);
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(1);
  });

  it('signs the SHA-256 of the bytes: a signature of other bytes does not verify', async () => {
    const { client } = kmsOf();
    const signer = new KmsSealSigner(client, KEY_ARN);
    const sealed = await sealWindow(
      { start: DAY, end: DAY + 5 * MINUTE, auditOn: true },
      [auditRecord(DAY + 1_000)],
      GENESIS_HEAD,
      signer,
      DAY + 10 * MINUTE,
    );
    const changed = { ...sealed, seal: { ...sealed.seal, count: 2 } };
    expect(verifyWindows([changed], keys.publicKey).problems.map((problem) => problem.kind)).toContain(
      'signature',
    );
  });

  it('refuses a key of another spec, and asks again next time', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const { client, kms } = kmsOf({
      ...PUBLIC_KEY_ANSWER,
      PublicKey: spkiOf(rsa.publicKey),
      KeySpec: 'RSA_2048',
      SigningAlgorithms: ['RSASSA_PSS_SHA_256'],
    });
    const signer = new KmsSealSigner(client, KEY_ARN);
    await expect(signer.publicKey()).rejects.toThrow(
      `KMS key ${KEY_ARN} is not an ECC_NIST_P256 signing key`,
    );
    await expect(
      sealWindow({ start: DAY, end: DAY + 5 * MINUTE, auditOn: true }, [], GENESIS_HEAD, signer, DAY),
    ).rejects.toThrow('is not an ECC_NIST_P256 signing key');
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(2);
    expect(kms.commandCalls(SignCommand)).toHaveLength(0);
  });

  it('does not keep a failed GetPublicKey: the next call asks again, and that answer is kept', async () => {
    const { client, kms } = kmsOf();
    kms
      .on(GetPublicKeyCommand)
      .rejectsOnce(
        new KMSInternalException({ message: 'internal error', $metadata: { httpStatusCode: 500 } }),
      )
      .resolves(PUBLIC_KEY_ANSWER);
    const signer = new KmsSealSigner(client, KEY_ARN);
    await expect(signer.publicKey()).rejects.toThrow('internal error');
    expect(keyIdOf(await signer.publicKey())).toBe(keyIdOf(keys.publicKey));
    expect(keyIdOf(await signer.publicKey())).toBe(keyIdOf(keys.publicKey));
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(2);
  });

  it('says so when Sign answers no signature', async () => {
    const { client, kms } = kmsOf();
    kms.on(SignCommand).resolves({ KeyId: KEY_ARN, SigningAlgorithm: 'ECDSA_SHA_256' });
    await expect(new KmsSealSigner(client, KEY_ARN).sign(Buffer.from('seal'))).rejects.toThrow(
      `KMS key ${KEY_ARN} returned no signature`,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// S3: the SDK's answers.

/** An S3 error as the SDK throws it: its name, its HTTP status. */
function s3Error(name: string, status: number, message: string): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    message,
    $metadata: { httpStatusCode: status },
  });
}

/** S3's answer to a conditional write over an object. */
const preconditionFailed = () =>
  s3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold');
const noSuchKey = () =>
  new NoSuchKey({ message: 'The specified key does not exist.', $metadata: { httpStatusCode: 404 } });

/** GetObject's Body in Node: a stream with the SDK's `transformTo…` methods. */
const bodyOf = (bytes: Buffer) => sdkStreamMixin(Readable.from([bytes]));

function s3Of() {
  const client = new S3Client(CLIENT_CONFIG);
  return { client, s3: mockClient(client) };
}

const SEAL_KEY = sealKey(DAY);
const SECRET_BODY = Buffer.from('{"seal":"body-that-must-not-be-in-an-error"}');

describe('the S3 archive: create', () => {
  it('writes with If-None-Match, a SHA-256 checksum and the compliance lock until the date', async () => {
    const { client, s3 } = s3Of();
    s3.on(PutObjectCommand).resolves({ VersionId: 'v1', ETag: '"e"' });
    const archive = new S3SealArchive(client, BUCKET);
    expect(archive).toMatchObject({ where: `s3://${BUCKET}`, locks: true });
    expect(await archive.create(SEAL_KEY, SECRET_BODY, LOCK_UNTIL)).toBe('written');
    expect(s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input)).toEqual([
      {
        Bucket: BUCKET,
        Key: SEAL_KEY,
        Body: SECRET_BODY,
        IfNoneMatch: '*',
        ContentType: 'application/json',
        ChecksumAlgorithm: 'SHA256',
        ObjectLockMode: 'COMPLIANCE',
        ObjectLockRetainUntilDate: LOCK_UNTIL,
      },
    ]);
  });

  it('writes the governance lock when made so, and no lock without a date', async () => {
    const { client, s3 } = s3Of();
    s3.on(PutObjectCommand).resolves({});
    const archive = new S3SealArchive(client, BUCKET, 'governance');
    await archive.create(recordsKey(DAY), Buffer.from('{}\n'), LOCK_UNTIL);
    await archive.create(publicKeyKey('ab'.repeat(16)), Buffer.from('pem'), undefined);
    const [locked, unlocked] = s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
    expect(locked).toMatchObject({
      Key: recordsKey(DAY),
      ContentType: 'application/x-ndjson',
      IfNoneMatch: '*',
      ObjectLockMode: 'GOVERNANCE',
      ObjectLockRetainUntilDate: LOCK_UNTIL,
    });
    expect(unlocked).toMatchObject({
      Key: publicKeyKey('ab'.repeat(16)),
      ContentType: 'application/x-pem-file',
      IfNoneMatch: '*',
      ChecksumAlgorithm: 'SHA256',
    });
    expect(unlocked).not.toHaveProperty('ObjectLockMode');
    expect(unlocked).not.toHaveProperty('ObjectLockRetainUntilDate');
  });

  it.each([
    ['412 PreconditionFailed', preconditionFailed()],
    [
      '409 ConditionalRequestConflict',
      s3Error('ConditionalRequestConflict', 409, 'A conflicting conditional operation is in progress'),
    ],
    [
      'a plain error with the status',
      Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
        name: 'PreconditionFailed',
        $metadata: { httpStatusCode: 412 },
      }),
    ],
  ])('reads %s as exists', async (_, error) => {
    const { client, s3 } = s3Of();
    s3.on(PutObjectCommand).rejects(error);
    expect(await new S3SealArchive(client, BUCKET).create(SEAL_KEY, SECRET_BODY, LOCK_UNTIL)).toBe('exists');
  });

  it('throws a SealArchiveError naming the key and the status, never the body, on another refusal', async () => {
    const { client, s3 } = s3Of();
    const denied = s3Error('AccessDenied', 403, 'Access Denied');
    s3.on(PutObjectCommand).rejects(denied);
    const error = await new S3SealArchive(client, BUCKET).create(SEAL_KEY, SECRET_BODY, LOCK_UNTIL).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(SealArchiveError);
    const { message, cause } = error as SealArchiveError;
    expect(message).toBe(`cannot write ${SEAL_KEY} to s3://${BUCKET}: AccessDenied (403)`);
    expect(message).not.toContain('body-that-must-not-be-in-an-error');
    expect(cause).toBe(denied);
  });

  it('names an error without a status by its name alone', async () => {
    const { client, s3 } = s3Of();
    s3.on(PutObjectCommand).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
    await expect(new S3SealArchive(client, BUCKET).create(SEAL_KEY, SECRET_BODY, undefined)).rejects.toThrow(
      `cannot write ${SEAL_KEY} to s3://${BUCKET}: TimeoutError`,
    );
  });
});

describe('the S3 archive: read', () => {
  it("answers the object's bytes from GetObject's stream", async () => {
    const { client, s3 } = s3Of();
    s3.on(GetObjectCommand, { Bucket: BUCKET, Key: SEAL_KEY }).resolves({ Body: bodyOf(SECRET_BODY) });
    expect(await new S3SealArchive(client, BUCKET).read(SEAL_KEY)).toEqual(SECRET_BODY);
  });

  it('answers undefined for NoSuchKey (a missing key, or a delete marker as its latest version)', async () => {
    const { client, s3 } = s3Of();
    s3.on(GetObjectCommand).rejects(noSuchKey());
    expect(await new S3SealArchive(client, BUCKET).read(SEAL_KEY)).toBeUndefined();
  });

  it('throws a SealArchiveError on another refusal', async () => {
    const { client, s3 } = s3Of();
    s3.on(GetObjectCommand).rejects(s3Error('AccessDenied', 403, 'Access Denied'));
    await expect(new S3SealArchive(client, BUCKET).read(SEAL_KEY)).rejects.toThrow(
      new SealArchiveError(`cannot read ${SEAL_KEY} from s3://${BUCKET}: AccessDenied (403)`),
    );
  });
});

describe('the S3 archive: list', () => {
  const prefix = 'seals/year=2026/month=12/day=07/';
  const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((name) => `${prefix}${name}.json`) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const until = (day: number) => new Date(Date.UTC(2028, 0, day));
  const PAGE_1: Partial<ListObjectVersionsCommandOutput> = {
    IsTruncated: true,
    NextKeyMarker: b,
    NextVersionIdMarker: 'b-marker',
    Versions: [
      { Key: a, VersionId: 'a2', IsLatest: true },
      { Key: a, VersionId: 'a1', IsLatest: false },
    ],
    DeleteMarkers: [{ Key: b, VersionId: 'b-marker', IsLatest: true }],
  };
  const PAGE_2: Partial<ListObjectVersionsCommandOutput> = {
    IsTruncated: false,
    Versions: [
      { Key: b, VersionId: 'b1', IsLatest: false },
      { Key: c, VersionId: 'c1', IsLatest: true },
      { Key: d, VersionId: 'd1', IsLatest: true },
      { Key: e, VersionId: 'e2', IsLatest: true },
      { Key: e, VersionId: 'e1', IsLatest: false },
    ],
    // e was deleted, then written again: the marker is one more version.
    DeleteMarkers: [{ Key: e, VersionId: 'e-marker', IsLatest: false }],
  };

  function listed() {
    const { client, s3 } = s3Of();
    s3.on(ListObjectVersionsCommand).callsFake((input) => {
      if (input.KeyMarker === undefined && input.VersionIdMarker === undefined) return PAGE_1;
      if (input.KeyMarker === b && input.VersionIdMarker === 'b-marker') return PAGE_2;
      throw s3Error('InvalidArgument', 400, 'unexpected markers');
    });
    const retention: Record<string, ObjectLockRetention> = {
      [a]: { Mode: 'COMPLIANCE', RetainUntilDate: until(11) },
      [c]: { Mode: 'GOVERNANCE', RetainUntilDate: until(12) },
      [e]: { Mode: 'COMPLIANCE', RetainUntilDate: until(13) },
    };
    // HeadObject answers the lock's headers when there is one, nothing of it otherwise.
    s3.on(HeadObjectCommand).callsFake((input) => {
      const held = retention[input.Key as string];
      return held === undefined
        ? {}
        : { ObjectLockMode: held.Mode, ObjectLockRetainUntilDate: held.RetainUntilDate };
    });
    return { client, s3 };
  }

  it('counts versions and delete markers over the pages, and reads each live key’s lock', async () => {
    const { client, s3 } = listed();
    expect(await new S3SealArchive(client, BUCKET).list(prefix)).toEqual([
      { key: a, versions: 2, deleted: false, lock: { mode: 'compliance', until: until(11).toISOString() } },
      { key: b, versions: 1, deleted: true },
      { key: c, versions: 1, deleted: false, lock: { mode: 'governance', until: until(12).toISOString() } },
      { key: d, versions: 1, deleted: false },
      { key: e, versions: 3, deleted: false, lock: { mode: 'compliance', until: until(13).toISOString() } },
    ]);
    expect(s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: BUCKET, Prefix: prefix },
      { Bucket: BUCKET, Prefix: prefix, KeyMarker: b, VersionIdMarker: 'b-marker' },
    ]);
    // No retention asked of the deleted key.
    expect(s3.commandCalls(HeadObjectCommand).map((call) => call.args[0].input)).toEqual(
      [a, c, d, e].map((key) => ({ Bucket: BUCKET, Key: key })),
    );
  });

  it('throws a SealArchiveError when a page or a retention cannot be read', async () => {
    const { client, s3 } = listed();
    s3.on(HeadObjectCommand, { Key: c }).rejects(s3Error('AccessDenied', 403, 'Access Denied'));
    await expect(new S3SealArchive(client, BUCKET).list(prefix)).rejects.toThrow(
      new SealArchiveError(`cannot read the retention of ${c} in s3://${BUCKET}: AccessDenied (403)`),
    );
    s3.on(ListObjectVersionsCommand).rejects(
      s3Error('NoSuchBucket', 404, 'The specified bucket does not exist'),
    );
    await expect(new S3SealArchive(client, BUCKET).list(prefix)).rejects.toThrow(
      new SealArchiveError(`cannot list ${prefix} in s3://${BUCKET}: NoSuchBucket (404)`),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The sealer and `verify` over a versioned Object Lock bucket held in memory.

interface Version {
  readonly id: string;
  /** `undefined`: a delete marker. */
  readonly body: Buffer | undefined;
  retention?: ObjectLockRetention;
}

/**
 * A versioned bucket with Object Lock behind a mocked S3 client, answering as S3 does: a
 * conditional PutObject over a live object is 412; the bucket policy refuses a write without
 * If-None-Match; Object Lock needs a checksum; ListObjectVersions pages of `pageSize` entries
 * (keys in order, each key's versions newest first).
 */
function bucketOf(pageSize = 2) {
  const { client, s3 } = s3Of();
  const objects = new Map<string, Version[]>();
  let versionIds = 0;
  const latest = (key: string) => objects.get(key)?.at(-1);
  const add = (key: string, body: Buffer | undefined, retention?: ObjectLockRetention) => {
    versionIds += 1;
    const version: Version = { id: `v${versionIds}`, body, ...(retention && { retention }) };
    objects.set(key, [...(objects.get(key) ?? []), version]);
  };
  s3.on(PutObjectCommand).callsFake((input) => {
    const key = input.Key as string;
    if (input.IfNoneMatch !== '*') throw s3Error('AccessDenied', 403, 'Access Denied');
    if (input.ObjectLockMode !== undefined && input.ChecksumAlgorithm === undefined) {
      throw s3Error('InvalidRequest', 400, 'Content-MD5 OR x-amz-checksum- HTTP header is required');
    }
    if (latest(key)?.body !== undefined) throw preconditionFailed();
    const { ObjectLockMode: Mode, ObjectLockRetainUntilDate: until } = input;
    add(key, input.Body as Buffer, Mode === undefined ? undefined : { Mode, RetainUntilDate: until as Date });
    return { VersionId: `v${versionIds}` };
  });
  s3.on(GetObjectCommand).callsFake((input) => {
    const body = latest(input.Key as string)?.body;
    if (body === undefined) throw noSuchKey();
    return { Body: bodyOf(body) };
  });
  s3.on(HeadObjectCommand).callsFake((input) => {
    const held = latest(input.Key as string);
    if (held === undefined) throw noSuchKey();
    const retention = held.retention;
    return retention === undefined
      ? {}
      : { ObjectLockMode: retention.Mode, ObjectLockRetainUntilDate: retention.RetainUntilDate };
  });
  s3.on(ListObjectVersionsCommand).callsFake((input) => {
    const entries = [...objects]
      .filter(([key]) => key.startsWith(input.Prefix ?? ''))
      .sort(([x], [y]) => (x < y ? -1 : 1))
      .flatMap(([key, versions]) =>
        versions.map((version, i) => ({ key, version, isLatest: i === versions.length - 1 })).reverse(),
      );
    const marker = entries.findIndex(
      ({ key, version }) => key === input.KeyMarker && version.id === input.VersionIdMarker,
    );
    const after = input.KeyMarker === undefined ? 0 : marker + 1;
    const page = entries.slice(after, after + pageSize);
    const last = page.at(-1);
    const more = after + pageSize < entries.length;
    return {
      IsTruncated: more,
      ...(more && last !== undefined
        ? { NextKeyMarker: last.key, NextVersionIdMarker: last.version.id }
        : {}),
      Versions: page
        .filter(({ version }) => version.body !== undefined)
        .map(({ key, version, isLatest }) => ({ Key: key, VersionId: version.id, IsLatest: isLatest })),
      DeleteMarkers: page
        .filter(({ version }) => version.body === undefined)
        .map(({ key, version, isLatest }) => ({ Key: key, VersionId: version.id, IsLatest: isLatest })),
    };
  });
  return {
    client,
    s3,
    keys: () => [...objects.keys()].sort(),
    versionsOf: (key: string) => objects.get(key)?.length ?? 0,
    /** Tampering, as someone the bucket policy and the lock do not stop would. */
    putAgain: (key: string) => add(key, latest(key)?.body, latest(key)?.retention),
    deleteMarker: (key: string) => add(key, undefined),
    unlock: (key: string) => {
      const version = latest(key);
      if (version !== undefined) delete version.retention;
    },
  };
}

describe('the sealer and verify over S3 and KMS', () => {
  const settings = { minutes: 5, pendingAfterMs: PENDING_MS, auditOn: true, lockDays: 400, genesis: DAY };
  /** When window `index` of the day may first be sealed. */
  const closesAt = (index: number) => DAY + (index + 1) * 5 * MINUTE + PENDING_MS + SEAL_MARGIN_MS;
  const window = (index: number) => DAY + index * 5 * MINUTE;

  async function sealedBucket() {
    const bucket = bucketOf();
    const archive = new S3SealArchive(bucket.client, BUCKET);
    const { client: kmsClient, kms } = kmsOf();
    const ring = new EmbeddedAuditStore();
    for (const ms of [DAY + 1_000, DAY + 2_000, window(2) + 3_000]) await ring.create(auditRecord(ms));
    const now = closesAt(2);
    const parts = () => ({
      source: ring,
      complete: (record: Parameters<EmbeddedAuditStore['finish']>[0]) => ring.finish(record, 0),
      heads: new ArchiveSealHead(archive),
      archive,
      signer: new KmsSealSigner(kmsClient, KEY_ARN),
      now: () => now,
    });
    const run = await sealClosedWindows(parts(), settings);
    return { bucket, archive, kms, run, now, again: () => sealClosedWindows(parts(), settings) };
  }

  const verifyOptions = {
    from: DAY,
    to: window(3),
    publicKey: keys.publicKey,
    lateAfterMs: 60 * MINUTE,
  };

  it('writes every object once, locked, and a second run finds them there', async () => {
    const { bucket, kms, run, now, again } = await sealedBucket();
    expect(run).toMatchObject({ sealed: 3, stopped: 'caught_up' });
    expect(bucket.keys()).toEqual([
      publicKeyKey(keyIdOf(keys.publicKey)),
      recordsKey(window(0)),
      recordsKey(window(2)),
      sealKey(window(0)),
      sealKey(window(1)),
      sealKey(window(2)),
    ]);
    const lockUntil = new Date(now + 400 * 86_400_000);
    for (const call of bucket.s3.commandCalls(PutObjectCommand)) {
      expect(call.args[0].input).toMatchObject({
        Bucket: BUCKET,
        IfNoneMatch: '*',
        ChecksumAlgorithm: 'SHA256',
        ObjectLockMode: 'COMPLIANCE',
        ObjectLockRetainUntilDate: lockUntil,
      });
    }
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(1);
    expect(kms.commandCalls(SignCommand)).toHaveLength(3);
    // The public key is there (412, the same bytes): nothing more is written, nothing replaced.
    expect(await again()).toMatchObject({ sealed: 0, stopped: 'caught_up' });
    expect(bucket.s3.commandCalls(PutObjectCommand)).toHaveLength(7);
    for (const key of bucket.keys()) expect(bucket.versionsOf(key)).toBe(1);
  });

  it('verifies the untouched bucket, listing it over pages', async () => {
    const { bucket, archive } = await sealedBucket();
    bucket.s3.resetHistory();
    expect(await verifyArchive(archive, verifyOptions)).toMatchObject({
      where: `s3://${BUCKET}`,
      windows: 3,
      records: 3,
      problems: [],
      // The first window starts the chain (the sealer's first).
      notices: [{ kind: 'chain_start', window: expect.any(String) }],
    });
    // Three seals, two records objects and the key, two entries a page.
    expect(bucket.s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: BUCKET, Prefix: 'seals/year=2026/month=12/day=07/' },
      {
        Bucket: BUCKET,
        Prefix: 'seals/year=2026/month=12/day=07/',
        KeyMarker: sealKey(window(1)),
        VersionIdMarker: expect.any(String),
      },
      { Bucket: BUCKET, Prefix: 'records/year=2026/month=12/day=07/' },
      // The public keys are held to the same: one version, locked.
      { Bucket: BUCKET, Prefix: 'keys/' },
    ]);
  });

  it('names a second version of a seal, an object without retention and a delete marker', async () => {
    const { bucket, archive } = await sealedBucket();
    bucket.putAgain(sealKey(window(0)));
    bucket.unlock(recordsKey(window(2)));
    bucket.deleteMarker(sealKey(window(1)));
    const report = await verifyArchive(archive, verifyOptions);
    expect(report.problems).toEqual([
      { kind: 'versions', key: sealKey(window(0)), versions: 2 },
      { kind: 'deleted', key: sealKey(window(1)) },
      { kind: 'unlocked', key: recordsKey(window(2)) },
      // The empty window's seal gone: its neighbours still chain (it kept the head), but a window is missing.
      {
        kind: 'window_missing',
        from: new Date(window(1)).toISOString(),
        to: new Date(window(2)).toISOString(),
      },
    ]);
    // The replaced seal still reads (its current version) and the other windows verify.
    expect(report).toMatchObject({ windows: 2, records: 3 });
  });
});

describe('the stack’s sealer parts', () => {
  const env = {
    AWS_REGION: 'eu-west-1',
    AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-audit-sealer',
    // Lambda's credentials, which the table's client reads.
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'y',
    AUDIT_TABLE: 'erp-proxy-audit',
    AUDIT_BUCKET: BUCKET,
    AUDIT_SEAL_KEY_ID: KEY_ARN,
  };

  it('write to the bucket and sign with the key of the configuration, through the given clients', async () => {
    const { client: s3Client, s3 } = s3Of();
    s3.on(PutObjectCommand).resolves({});
    const { client: kmsClient, kms } = kmsOf();
    const parts = awsSealerParts(loadConfig({ ...env, AUDIT_SEALING: 'governance' }), {
      s3: s3Client,
      kms: kmsClient,
    });
    expect(parts.archive).toBeInstanceOf(S3SealArchive);
    expect(parts.archive.where).toBe(`s3://${BUCKET}`);
    expect(parts.signer).toBeInstanceOf(KmsSealSigner);
    expect(keyIdOf(await parts.signer.publicKey())).toBe(keyIdOf(keys.publicKey));
    expect(kms.commandCalls(GetPublicKeyCommand)[0]?.args[0].input).toEqual({ KeyId: KEY_ARN });
    await parts.archive.create(SEAL_KEY, SECRET_BODY, LOCK_UNTIL);
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({
      Bucket: BUCKET,
      ObjectLockMode: 'GOVERNANCE',
    });
  });

  it('lock in compliance mode by default', async () => {
    const { client: s3Client, s3 } = s3Of();
    s3.on(PutObjectCommand).resolves({});
    const parts = awsSealerParts(loadConfig(env), { s3: s3Client, kms: kmsOf().client });
    await parts.archive.create(SEAL_KEY, SECRET_BODY, LOCK_UNTIL);
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({
      ObjectLockMode: 'COMPLIANCE',
    });
  });

  it('say a missing bucket or key is a deploy error', () => {
    for (const missing of ['AUDIT_BUCKET', 'AUDIT_SEAL_KEY_ID', 'AUDIT_TABLE']) {
      const config = loadConfig({ ...env, [missing]: undefined });
      expect(() => awsSealerParts(config)).toThrow(
        'the sealer needs AUDIT_TABLE, AUDIT_BUCKET and AUDIT_SEAL_KEY_ID (the stack sets them)',
      );
    }
  });
});
