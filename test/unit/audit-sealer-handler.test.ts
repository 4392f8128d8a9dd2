/**
 * The `audit-sealer` function's handler (handlers/audit-sealer.ts, operator/audit-sealing.ts) as
 * its schedules invoke it: an event that is not one of its two jobs is refused and runs nothing;
 * `audit-seal` seals and publishes `AuditWindowsSealed` and `AuditSealLag` (EMF, the names and
 * namespace the alarms read) with one log line; `audit-verify` verifies the last day's windows with
 * the signer's key and publishes `AuditVerifyFailures`: 0 when they verify, the problems (WARN,
 * each named) after a tampering; a sealer that fails logs an ERROR and throws (its errors alarm).
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { handler, runAuditJob } from '../../lambdas/handlers/audit-sealer.ts';
import { keyIdOf, keyPairSigner } from '../../lambdas/platform/audit/audit-chain.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import type { SealArchive } from '../../lambdas/platform/audit/seal-archive.ts';
import { DirectorySealArchive } from '../../lambdas/platform/audit/seal-archive-dir.ts';
import { ArchiveSealHead } from '../../lambdas/platform/audit/seal-head.ts';
import { publicKeyKey, recordsKey, SEAL_MARGIN_MS } from '../../lambdas/platform/audit/seal-layout.ts';
import type { SealerParts } from '../../lambdas/platform/audit/seal-windows.ts';
import { createLogger } from '../../lambdas/platform/logger.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { AUDIT_SEAL_EVENT, AUDIT_VERIFY_EVENT } from '../../lambdas/platform/scheduled-jobs.ts';
import { auditRecord } from '../support/audit-records.ts';
import { captureLogLines } from '../support/captured-output.ts';

const MINUTE = 60_000;
const PENDING_MS = 58_000;
const dirs: string[] = [];
afterEach(() => vi.restoreAllMocks());
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const config = {
  runtime: 'lambda',
  serviceName: 'erp-proxy',
  metricsNamespace: 'ErpProxy',
  logLevel: 'INFO',
} as const;

/** A sealer over a ring holding one record per window of the last hour, and its clock at `now`. */
async function sealer(now: number) {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-sealer-'));
  dirs.push(dir);
  const ring = new EmbeddedAuditStore();
  const start = now - 60 * MINUTE;
  for (let ms = start; ms < now; ms += 5 * MINUTE) await ring.create(auditRecord(ms + 1_000));
  const archive = new DirectorySealArchive(dir);
  const parts: SealerParts = {
    source: ring,
    complete: (record) => ring.finish(record, 0),
    heads: new ArchiveSealHead(archive),
    archive,
    signer: keyPairSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' })),
    now: () => now,
  };
  const settings = {
    minutes: 5,
    pendingAfterMs: PENDING_MS,
    auditOn: true,
    lockDays: undefined,
    genesis: start,
  };
  return {
    dir,
    deps: { parts, settings, logger: createLogger(config), metrics: createMetrics(config) },
  };
}

/** The EMF records' metric values by name, and the log lines. */
function split(lines: Record<string, unknown>[]) {
  const metrics: Record<string, unknown> = {};
  for (const line of lines.filter((held) => '_aws' in held)) {
    const aws = line._aws as { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string }[] }[] };
    for (const { Namespace, Metrics } of aws.CloudWatchMetrics) {
      expect(Namespace).toBe('ErpProxy');
      for (const { Name } of Metrics) metrics[Name] = line[Name];
    }
  }
  return { metrics, logs: lines.filter((held) => !('_aws' in held)) };
}

const NOW = Date.UTC(2026, 11, 7, 12, 0) + PENDING_MS + SEAL_MARGIN_MS;

describe('the audit-sealer function', () => {
  it('refuses any other event, running nothing', async () => {
    const { deps } = await sealer(NOW);
    const lines = captureLogLines();
    for (const event of [
      {},
      { erp_proxy_job: 'license-days-left' },
      { ...AUDIT_SEAL_EVENT, version: '2.0' },
      null,
    ]) {
      await expect(runAuditJob(event, deps)).rejects.toThrow('not an audit job event');
    }
    expect(lines()).toEqual([]);
  });

  it('seals, publishing AuditWindowsSealed and AuditSealLag, with one log line', async () => {
    const { deps } = await sealer(NOW);
    const lines = captureLogLines();
    expect(await runAuditJob(AUDIT_SEAL_EVENT, deps)).toEqual({
      job: 'audit-seal',
      sealed: 12,
      lag_minutes: 1,
      stopped: 'caught_up',
    });
    const { metrics, logs } = split(lines());
    expect(metrics).toEqual({ AuditWindowsSealed: 12, AuditSealLag: 1 });
    expect(logs).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'audit sealing', sealed: 12, lag_minutes: 1 }),
    ]);
  });

  it('verifies the last day with the signer’s key: 0 failures, then each problem after a tampering', async () => {
    const { deps, dir } = await sealer(NOW);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    await runAuditJob(AUDIT_SEAL_EVENT, deps);
    vi.restoreAllMocks();
    let lines = captureLogLines();
    expect(await runAuditJob(AUDIT_VERIFY_EVENT, deps)).toEqual({
      job: 'audit-verify',
      windows: 12,
      records: 12,
      problems: 0,
    });
    expect(split(lines()).metrics).toEqual({ AuditVerifyFailures: 0 });
    vi.restoreAllMocks();

    const path = join(dir, ...recordsKey(NOW - 30 * MINUTE - PENDING_MS - SEAL_MARGIN_MS).split('/'));
    chmodSync(path, 0o644);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"outcome":"ok"', '"outcome":"refused"'));
    lines = captureLogLines();
    // The sealed copy no longer matches its chain, nor the table's record (the daily run reads both).
    expect(await runAuditJob(AUDIT_VERIFY_EVENT, deps)).toMatchObject({ windows: 11, problems: 2 });
    const { metrics, logs } = split(lines());
    expect(metrics).toEqual({ AuditVerifyFailures: 2 });
    const findings = logs[0]?.findings as string[];
    expect(findings[0]).toContain('a record was changed');
    expect(findings[1]).toContain('was edited in the table after sealing');
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'WARN',
        message: 'audit verification',
        failures: 2,
        // The problems first; then the notices (this test's sealer caught up an hour: late windows).
        findings: expect.arrayContaining([expect.stringContaining('a record was changed')]),
      }),
    ]);
  });

  it("moves the public key's lock to AUDIT_LOCK_DAYS from now at each verification, never shortening it", async () => {
    const { deps } = await sealer(NOW);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    await runAuditJob(AUDIT_SEAL_EVENT, deps);
    const base = deps.parts.archive;
    const extended: [string, string][] = [];
    let keyLock: string | undefined;
    const archive: SealArchive = {
      where: base.where,
      locks: false,
      create: (key, body, until) => base.create(key, body, until),
      read: (key) => base.read(key),
      list: async (prefix) =>
        (await base.list(prefix)).map((object) =>
          keyLock !== undefined && object.key.startsWith('keys/')
            ? { ...object, lock: { mode: 'compliance', until: keyLock } }
            : object,
        ),
      extendLock: async (key, until) => {
        extended.push([key, until.toISOString()]);
      },
    };
    const locked = {
      ...deps,
      parts: { ...deps.parts, archive },
      settings: { ...deps.settings, lockDays: 30 },
    };
    const key = publicKeyKey(keyIdOf(await deps.parts.signer.publicKey()));
    await runAuditJob(AUDIT_VERIFY_EVENT, locked);
    expect(extended).toEqual([[key, new Date(NOW + 30 * 86_400_000).toISOString()]]);
    extended.length = 0;
    keyLock = new Date(NOW + 31 * 86_400_000).toISOString();
    await runAuditJob(AUDIT_VERIFY_EVENT, locked);
    expect(extended).toEqual([]);
  });

  it('as deployed without its table, bucket or key, fails saying which settings the stack sets', async () => {
    await expect(handler(AUDIT_SEAL_EVENT, {} as Parameters<typeof handler>[1])).rejects.toThrow(
      'the sealer needs AUDIT_TABLE, AUDIT_BUCKET and AUDIT_SEAL_KEY_ID (the stack sets them)',
    );
  });

  it('logs an ERROR and throws when sealing fails, so the errors alarm fires', async () => {
    const { deps } = await sealer(NOW);
    const failing = {
      ...deps,
      parts: { ...deps.parts, source: { readWindow: () => Promise.reject(new Error('table unreachable')) } },
    };
    const lines = captureLogLines();
    await expect(runAuditJob(AUDIT_SEAL_EVENT, failing)).rejects.toThrow('table unreachable');
    const { metrics, logs } = split(lines());
    expect(metrics).toEqual({ AuditWindowsSealed: 0 });
    expect(logs).toEqual([expect.objectContaining({ level: 'ERROR', message: 'audit sealing' })]);
  });
});
