/**
 * The S3 archive of sealed windows (platform/audit/seal-archive-s3.ts) over real HTTP, against
 * moto's S3 server on loopback, where the machine has it (`moto_server` on the PATH; skipped
 * without it: neither the npm registry nor Debian offers an S3 server with Object Lock). What moto
 * shows that the SDK-answer tests (test/unit/seal-aws.test.ts) cannot: the SDK's own requests
 * (`If-None-Match: *` answered 412 over an object, the lock headers with a SHA-256 checksum, the
 * versions listing, the lock read back by `HeadObject`), a sealer run into the bucket verified,
 * and a second version of a seal and a deleted records object named. Object Lock's guarantees
 * themselves are the stack's (test/infra/audit-seal.test.ts): moto does not enforce bucket
 * policies.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPairSigner } from '../../lambdas/platform/audit/audit-chain.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { verifyArchive } from '../../lambdas/platform/audit/audit-verify.ts';
import { S3SealArchive } from '../../lambdas/platform/audit/seal-archive-s3.ts';
import type { SealHead, SealHeadStore } from '../../lambdas/platform/audit/seal-head.ts';
import { recordsKey, SEAL_MARGIN_MS, sealKey } from '../../lambdas/platform/audit/seal-layout.ts';
import { sealClosedWindows } from '../../lambdas/platform/audit/seal-windows.ts';
import { auditRecord } from '../support/audit-records.ts';
import { freePort } from '../support/proxy-harness.ts';

const HAS_MOTO = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' }).status === 0;
const MINUTE = 60_000;
const DAY = Date.UTC(2026, 11, 7);
const PENDING_MS = 58_000;

describe.skipIf(!HAS_MOTO)("the S3 archive against moto's S3 server", () => {
  let moto: ChildProcess | undefined;
  let client: S3Client;
  let buckets = 0;

  beforeAll(async () => {
    const port = await freePort();
    moto = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const endpoint = `http://127.0.0.1:${port}`;
    client = new S3Client({
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'moto', secretAccessKey: 'moto' },
    });
    for (let tries = 0; ; tries += 1) {
      try {
        await fetch(endpoint);
        break;
      } catch (error) {
        if (tries === 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }, 30_000);

  afterAll(() => {
    moto?.kill('SIGKILL');
    client?.destroy();
  });

  async function bucket(): Promise<string> {
    buckets += 1;
    const name = `erp-proxy-seals-${buckets}`;
    await client.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
    return name;
  }

  it('creates an object once (412 over it), locked, and lists its one version and lock', async () => {
    const name = await bucket();
    const archive = new S3SealArchive(client, name, 'compliance');
    const until = new Date(Date.now() + 86_400_000);
    expect(await archive.create('keys/a.pem', Buffer.from('first'), until)).toBe('written');
    expect(await archive.create('keys/a.pem', Buffer.from('second'), until)).toBe('exists');
    expect((await archive.read('keys/a.pem'))?.toString()).toBe('first');
    expect(await archive.read('keys/none.pem')).toBeUndefined();
    const [listed] = await archive.list('keys/');
    expect(listed).toMatchObject({
      key: 'keys/a.pem',
      versions: 1,
      deleted: false,
      lock: { mode: 'compliance' },
    });
    expect(Math.abs(Date.parse(listed?.lock?.until as string) - until.getTime())).toBeLessThan(1_000);
    // The lock moved later (the daily verification keeps the public key locked as long as the seals).
    const later = new Date(until.getTime() + 2 * 86_400_000);
    await archive.extendLock('keys/a.pem', later);
    const [extended] = await archive.list('keys/');
    expect(Math.abs(Date.parse(extended?.lock?.until as string) - later.getTime())).toBeLessThan(1_000);
    expect(extended?.versions).toBe(1);
  });

  it('holds a sealer run that verifies, and names a second version of a seal and a deleted records object', async () => {
    const name = await bucket();
    const archive = new S3SealArchive(client, name, 'governance');
    const ring = new EmbeddedAuditStore();
    for (const ms of [1_000, 2_000, 6 * MINUTE, 11 * MINUTE]) await ring.create(auditRecord(DAY + ms));
    let held: SealHead | undefined;
    const heads: SealHeadStore = {
      read: async () => held,
      advance: async (from, to) => {
        if (held?.head !== from?.head) return false;
        held = to;
        return true;
      },
    };
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const run = await sealClosedWindows(
      {
        source: ring,
        complete: (record) => ring.finish(record, 0),
        heads,
        archive,
        signer: keyPairSigner(keys),
        now: () => DAY + 15 * MINUTE + PENDING_MS + SEAL_MARGIN_MS,
      },
      { minutes: 5, pendingAfterMs: PENDING_MS, auditOn: true, lockDays: 1, genesis: DAY },
    );
    expect(run.sealed).toBe(3);
    const options = { from: DAY, to: DAY + 86_400_000, publicKey: keys.publicKey, lateAfterMs: 20 * MINUTE };
    expect(await verifyArchive(archive, options)).toMatchObject({ windows: 3, records: 4, problems: [] });

    // Someone with write access (moto enforces no bucket policy) puts a second version of a seal
    // and deletes a records object (a delete marker: its locked version stays).
    const seal = sealKey(DAY + 5 * MINUTE);
    await client.send(
      new PutObjectCommand({ Bucket: name, Key: seal, Body: (await archive.read(seal)) as Buffer }),
    );
    await client.send(new DeleteObjectCommand({ Bucket: name, Key: recordsKey(DAY + 10 * MINUTE) }));
    const report = await verifyArchive(archive, options);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        { kind: 'versions', key: seal, versions: 2 },
        { kind: 'deleted', key: recordsKey(DAY + 10 * MINUTE) },
        { kind: 'records_removed', window: new Date(DAY + 10 * MINUTE).toISOString(), count: 1 },
      ]),
    );
  });
});
