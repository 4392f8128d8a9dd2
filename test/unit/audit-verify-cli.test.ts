/**
 * `npm run audit-log -- verify` (bin/audit-seal-cli.ts) against a local export sealed by the
 * sealer: the untouched export verifies (exit 0); after each tampering (a field of one record
 * changed, a record removed, one inserted, two swapped, a seal's count changed, a seal replaced by
 * one signed with another key, a window deleted, a records object without its seal) the problem is
 * named and the exit code is 1. Also the key the auditor trusts: `--public-key`, `--fingerprint`
 * (the archive's copy must have it), the local key; and `public-key`'s fingerprint.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAuditLog } from '../../bin/audit-log.ts';
import { fingerprintOf, keyPairSigner, sealWindow } from '../../lambdas/platform/audit/audit-chain.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { DirectorySealArchive } from '../../lambdas/platform/audit/seal-archive-dir.ts';
import { ArchiveSealHead } from '../../lambdas/platform/audit/seal-head.ts';
import {
  linesOf,
  recordsKey,
  SEAL_MARGIN_MS,
  sealBody,
  sealKey,
  sealOfBody,
} from '../../lambdas/platform/audit/seal-layout.ts';
import { localSealKeys } from '../../lambdas/platform/audit/seal-signer-local.ts';
import { sealClosedWindows } from '../../lambdas/platform/audit/seal-windows.ts';
import { auditRecord } from '../support/audit-records.ts';

const MINUTE = 60_000;
const DAY = Date.UTC(2026, 11, 7);
const PENDING_MS = 58_000;
const NOW = DAY + 20 * MINUTE + PENDING_MS + SEAL_MARGIN_MS;

let root: string;
let pristine: string;
let keyFile: string;
let publicKeyFile: string;
let keys: { privateKey: KeyObject; publicKey: KeyObject };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'erp-proxy-verify-'));
  pristine = join(root, 'pristine');
  keyFile = join(root, 'key', 'seal-key.pem');
  keys = (await localSealKeys(keyFile, { create: true })) as typeof keys;
  publicKeyFile = join(root, 'public.pem');
  writeFileSync(publicKeyFile, keys.publicKey.export({ type: 'spki', format: 'pem' }));
  const ring = new EmbeddedAuditStore();
  // Window 0: three records; window 1: none; window 2: two; window 3: one.
  for (const ms of [1_000, 2_000, 3_000, 10 * MINUTE + 1_000, 10 * MINUTE + 2_000, 15 * MINUTE + 1]) {
    await ring.create(auditRecord(DAY + ms));
  }
  const archive = new DirectorySealArchive(pristine);
  const run = await sealClosedWindows(
    {
      source: ring,
      complete: (record) => ring.finish(record, 0),
      heads: new ArchiveSealHead(archive),
      archive,
      signer: keyPairSigner(keys),
      now: () => NOW,
    },
    { minutes: 5, pendingAfterMs: PENDING_MS, auditOn: true, lockDays: undefined, genesis: DAY },
  );
  expect(run.sealed).toBe(4);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

let copies = 0;
/** A copy of the pristine export, every file writable. */
function copy(): string {
  copies += 1;
  const dir = join(root, `copy-${copies}`);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

function rewrite(path: string, change: (text: string) => string): void {
  chmodSync(path, 0o644);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

const window0 = (dir: string) => join(dir, ...recordsKey(DAY).split('/'));
const seal = (dir: string, start: number) => join(dir, ...sealKey(start).split('/'));

async function verify(args: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await runAuditLog(
    [
      'verify',
      '--from',
      new Date(DAY).toISOString(),
      '--to',
      new Date(DAY + 86_400_000).toISOString(),
      ...args,
    ],
    {
      env: { AUDIT_SEAL_KEY_FILE: keyFile, ...env },
      io: {
        stdout: { write: (text: string) => (out += text) },
        stderr: { write: (text: string) => (err += text) },
      },
      now: () => NOW,
    },
  );
  return { code, out, err };
}

const byKey = (dir: string) => verify(['--dir', dir, '--public-key', publicKeyFile]);

/** `verify --dir` of exactly the sealed windows [DAY, DAY + 20 min), an hour after they closed. */
async function verifyExactly(dir: string) {
  let out = '';
  const code = await runAuditLog(
    [
      'verify',
      '--dir',
      dir,
      '--public-key',
      publicKeyFile,
      '--from',
      new Date(DAY).toISOString(),
      '--to',
      new Date(DAY + 20 * MINUTE).toISOString(),
    ],
    {
      env: { AUDIT_SEAL_KEY_FILE: keyFile },
      io: {
        stdout: { write: (text: string) => (out += text) },
        stderr: { write: (text: string) => (out += text) },
      },
      now: () => NOW + 60 * MINUTE,
    },
  );
  return { code, out };
}

describe('npm run audit-log -- verify, on a local export', () => {
  it('verifies the untouched export: every window and record, exit code 0', async () => {
    const { code, out } = await byKey(pristine);
    expect(code).toBe(0);
    expect(out).toContain('4 windows and 6 records verified; 0 problem(s)');
  });

  it('names a field of one record changed', async () => {
    const dir = copy();
    rewrite(window0(dir), (text) => text.replace('"method":"write"', '"method":"unlink"'));
    const { code, out } = await byKey(dir);
    expect(code).toBe(1);
    expect(out).toContain(`FAIL window ${new Date(DAY).toISOString()}: a record was changed`);
  });

  it('names a record removed, one inserted, and two swapped', async () => {
    const removed = copy();
    rewrite(window0(removed), (text) =>
      linesOf(Buffer.from(text))
        .slice(1)
        .map((line) => `${line}\n`)
        .join(''),
    );
    expect((await byKey(removed)).out).toContain('1 record(s) removed');

    const inserted = copy();
    rewrite(window0(inserted), (text) => `${text}${JSON.stringify(auditRecord(DAY + 4_000))}\n`);
    const insertedRun = await byKey(inserted);
    expect(insertedRun.code).toBe(1);
    expect(insertedRun.out).toContain('1 record(s) inserted');

    const swapped = copy();
    rewrite(window0(swapped), (text) => {
      const [a, b, c] = linesOf(Buffer.from(text));
      return `${b}\n${a}\n${c}\n`;
    });
    const swappedRun = await byKey(swapped);
    expect(swappedRun.code).toBe(1);
    expect(swappedRun.out).toContain('records reordered');
  });

  it("names a seal's count changed, and a seal replaced by one signed with another key", async () => {
    const counted = copy();
    rewrite(seal(counted, DAY + 10 * MINUTE), (text) => text.replace('"count": 2', '"count": 1'));
    const countedRun = await byKey(counted);
    expect(countedRun.code).toBe(1);
    expect(countedRun.out).toContain("the seal's signature does not verify");

    const resigned = copy();
    const path = seal(resigned, DAY + 10 * MINUTE);
    const held = sealOfBody(readFileSync(path)) as NonNullable<ReturnType<typeof sealOfBody>>;
    const lines = linesOf(readFileSync(join(resigned, ...recordsKey(DAY + 10 * MINUTE).split('/'))));
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = await sealWindow(
      { start: DAY + 10 * MINUTE, end: DAY + 15 * MINUTE, auditOn: true },
      lines.map((line) => JSON.parse(line) as AuditRecord),
      held.seal.previous,
      keyPairSigner(other),
      NOW,
    );
    rewrite(path, () => sealBody(forged).toString());
    const resignedRun = await byKey(resigned);
    expect(resignedRun.code).toBe(1);
    expect(resignedRun.out).toContain('sealed by another key than the trusted one');
  });

  it('names a window deleted, and records left without their seal', async () => {
    const deleted = copy();
    unlinkSync(seal(deleted, DAY + 5 * MINUTE));
    const deletedRun = await byKey(deleted);
    expect(deletedRun.code).toBe(1);
    expect(deletedRun.out).toContain(
      `windows missing from ${new Date(DAY + 5 * MINUTE).toISOString()} to ${new Date(DAY + 10 * MINUTE).toISOString()}`,
    );

    const orphan = copy();
    unlinkSync(seal(orphan, DAY + 15 * MINUTE));
    const orphanRun = await byKey(orphan);
    expect(orphanRun.code).toBe(1);
    expect(orphanRun.out).toContain(
      `window ${new Date(DAY + 15 * MINUTE).toISOString()}: records without a seal`,
    );
  });

  it('names windows deleted at either end of the range, and a range without any', async () => {
    const exact = await verifyExactly(pristine);
    expect(exact.code, exact.out).toBe(0);
    expect(exact.out).toContain(`NOTE window ${new Date(DAY).toISOString()}: the chain starts here`);

    const tail = copy();
    unlinkSync(seal(tail, DAY + 15 * MINUTE));
    unlinkSync(join(tail, ...recordsKey(DAY + 15 * MINUTE).split('/')));
    const tailRun = await verifyExactly(tail);
    expect(tailRun.code).toBe(1);
    expect(tailRun.out).toContain(
      `windows missing from ${new Date(DAY + 15 * MINUTE).toISOString()} to ${new Date(DAY + 20 * MINUTE).toISOString()}`,
    );

    const head = copy();
    unlinkSync(seal(head, DAY));
    unlinkSync(window0(head));
    const headRun = await verifyExactly(head);
    expect(headRun.code).toBe(1);
    expect(headRun.out).toContain(
      `window ${new Date(DAY + 5 * MINUTE).toISOString()}: the seal before it is missing`,
    );

    const empty = join(root, 'empty');
    const emptyRun = await verifyExactly(empty);
    expect(emptyRun.code).toBe(1);
    expect(emptyRun.out).toContain('0 windows and 0 records verified');
    expect(emptyRun.out).toContain(`windows missing from ${new Date(DAY).toISOString()}`);
  });

  it('names a seal with a member twice, and a seal moved to another window', async () => {
    const doubled = copy();
    rewrite(seal(doubled, DAY + 10 * MINUTE), (text) => text.replace('{\n', '{\n  "seal": {"count": 99},\n'));
    const doubledRun = await byKey(doubled);
    expect(doubledRun.code).toBe(1);
    expect(doubledRun.out).toContain('not a seal as the sealer writes it');

    const moved = copy();
    const body = readFileSync(seal(moved, DAY + 10 * MINUTE));
    rewrite(seal(moved, DAY + 15 * MINUTE), () => body.toString());
    const movedRun = await byKey(moved);
    expect(movedRun.code).toBe(1);
    expect(movedRun.out).toContain(`${sealKey(DAY + 15 * MINUTE)}: not a seal as the sealer writes it`);
  });

  it('trusts the pinned fingerprint (the archive copy must have it), else the local key', async () => {
    const pinned = await verify([
      '--dir',
      pristine,
      '--fingerprint',
      `sha256:${fingerprintOf(keys.publicKey)}`,
    ]);
    expect(pinned.code).toBe(0);
    const other = fingerprintOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey);
    const wrong = await verify(['--dir', pristine, '--fingerprint', other]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('no public key with that fingerprint');
    expect((await verify(['--dir', pristine])).code).toBe(0);
    const noKey = await verify(['--dir', pristine], { AUDIT_SEAL_KEY_FILE: join(root, 'none.pem') });
    expect(noKey.code).toBe(2);
    expect(noKey.err).toContain('give --public-key or --fingerprint');
  });

  it('never prints a key from the configuration it could not load', async () => {
    const bad = await verify(['--dir', pristine], { AUDIT_DIGEST_KEY: 'hunter2-short-secret' });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('AUDIT_DIGEST_KEY');
    expect(bad.err).not.toContain('hunter2');
  });

  it('prints the public key and its fingerprint; a bucket without a pinned key is a usage error', async () => {
    let out = '';
    const code = await runAuditLog(['public-key'], {
      env: { AUDIT_SEAL_KEY_FILE: keyFile },
      io: { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => undefined } },
    });
    expect(code).toBe(0);
    expect(out).toContain('-----BEGIN PUBLIC KEY-----');
    expect(out).toContain(`fingerprint: sha256:${fingerprintOf(keys.publicKey)}`);
    const bucket = await verify(['--bucket', 'audit-bucket']);
    expect(bucket.code).toBe(2);
    expect(bucket.err).toContain('--bucket needs the key to trust');
    const both = await verify(['--bucket', 'b', '--dir', pristine]);
    expect(both.code).toBe(2);
  });
});
