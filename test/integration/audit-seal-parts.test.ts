/**
 * The local sealer's parts in this process (platform/audit/sealer-parts.ts, seal-head.ts,
 * handlers/local-sealer.ts), on DynamoDB Local and a temporary `AUDIT_DIR`: the seal head item
 * advances only from the head read; a local run on the audit table seals its records (a stale
 * pending one completed as `unknown` in the table) and they verify against the table; the timer
 * of `npm start` seals the embedded ring's first window, and stops; with `AUDIT_SEALING=off`
 * nothing starts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalSealer } from '../../lambdas/handlers/local-sealer.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import { GENESIS_HEAD } from '../../lambdas/platform/audit/audit-chain.ts';
import { DynamoDbAuditReader } from '../../lambdas/platform/audit/audit-reader-dynamodb.ts';
import { auditExpiry } from '../../lambdas/platform/audit/audit-record.ts';
import { DynamoDbAuditStore } from '../../lambdas/platform/audit/audit-store-dynamodb.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { verifyArchive } from '../../lambdas/platform/audit/audit-verify.ts';
import { DirectorySealArchive } from '../../lambdas/platform/audit/seal-archive-dir.ts';
import { DynamoDbSealHead } from '../../lambdas/platform/audit/seal-head.ts';
import { genesisStart } from '../../lambdas/platform/audit/seal-layout.ts';
import { sealClosedWindows } from '../../lambdas/platform/audit/seal-windows.ts';
import { localSealerParts, sealerSettings } from '../../lambdas/platform/audit/sealer-parts.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { createLogger } from '../../lambdas/platform/logger.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { auditRecord } from '../support/audit-records.ts';
import { localClient } from '../support/dynamodb-local.ts';
import { useAuditTable } from '../support/state-table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-seal-parts-'));
  dirs.push(dir);
  return dir;
}

describe('the seal head item on DynamoDB Local', () => {
  const audit = useAuditTable('seal-head');

  it('advances only from the head read', async () => {
    const heads = new DynamoDbSealHead(localClient(audit.endpoint), audit.table);
    const first = { head: GENESIS_HEAD, end: Date.UTC(2026, 11, 7, 10, 5) };
    const second = { head: 'ab'.repeat(32), end: Date.UTC(2026, 11, 7, 10, 10) };
    expect(await heads.read()).toBeUndefined();
    expect(await heads.advance(undefined, first, Date.now())).toBe(true);
    expect(await heads.advance(undefined, second, Date.now())).toBe(false);
    expect(await heads.advance(second, first, Date.now())).toBe(false);
    expect(await heads.advance(first, second, Date.now())).toBe(true);
    expect(await heads.read()).toEqual(second);
  });
});

describe('sealing on DynamoDB Local, in this process', () => {
  const audit = useAuditTable('seal-parts');

  it("seals the table's records into AUDIT_DIR, a stale pending one completed as unknown, and they verify against the table", async () => {
    const dir = tempDir();
    const config = loadConfig({
      ...audit.env(),
      AUDIT_SEALING: 'compliance',
      AUDIT_DIR: join(dir, 'audit'),
      AUDIT_SEAL_KEY_FILE: join(dir, 'key.pem'),
      AUDIT_PENDING_AFTER: '5',
    });
    const settings = sealerSettings(config, false);
    const now = Date.now();
    const start = genesisStart(now, settings.minutes, settings.pendingAfterMs);
    const writer = new DynamoDbAuditStore(localClient(audit.endpoint), audit.table);
    const done = auditRecord(start + 1_000);
    const stale = auditRecord(start + 2_000, { outcome: 'pending' });
    const expires = auditExpiry(now, 400);
    await writer.create(done, expires);
    await writer.create(stale, expires);
    // One clock for the test and the sealer: the window it takes is the one the records are in.
    const parts = await localSealerParts(config, undefined, () => now);
    expect(parts).toBeDefined();
    const run = await sealClosedWindows(parts as NonNullable<typeof parts>, settings);
    expect(run.sealed).toBe(1);
    const reader = new DynamoDbAuditReader(localClient(audit.endpoint), audit.table);
    const held = await reader.readWindow(start, start + settings.minutes * 60_000);
    expect(held.map((record) => [record.audit_id, record.outcome])).toEqual([
      [done.audit_id, 'ok'],
      [stale.audit_id, 'unknown'],
    ]);
    const report = await verifyArchive(new DirectorySealArchive(config.auditDir), {
      from: start,
      to: start + 60 * 60_000,
      publicKey: await (parts as NonNullable<typeof parts>).signer.publicKey(),
      lateAfterMs: 60 * 60_000,
      table: { source: reader, retentionDays: 400, now },
    });
    expect(report).toMatchObject({ windows: 1, records: 2, tableChecked: 2, problems: [] });
  });
});

describe("npm start's sealer timer", () => {
  const config = (dir: string, sealing: string) =>
    loadConfig({
      AUDIT_SEALING: sealing,
      AUDIT_DIR: join(dir, 'audit'),
      AUDIT_SEAL_KEY_FILE: join(dir, 'key.pem'),
    });
  const deps = () => {
    const store = new LocalMetricsStore();
    return {
      logger: createLogger({ serviceName: 'erp-proxy', logLevel: 'SILENT' }),
      metrics: createMetrics(
        { runtime: 'local', serviceName: 'erp-proxy', metricsNamespace: 'ErpProxy' },
        { store },
      ),
      tickMs: 50,
    };
  };

  it("seals the embedded ring's first closed window on its first tick, and stops", async () => {
    const dir = tempDir();
    const stop = await startLocalSealer(config(dir, 'compliance'), new EmbeddedAuditStore(), deps());
    expect(stop).toBeDefined();
    const deadline = Date.now() + 10_000;
    let seals: string[] = [];
    while (seals.length === 0 && Date.now() < deadline) {
      seals = (await readdir(join(dir, 'audit'), { recursive: true }).catch(() => [])).filter(
        (name) => name.startsWith('seals/') && name.endsWith('.json'),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stop?.();
    expect(seals).toHaveLength(1);
  });

  it('starts nothing with AUDIT_SEALING=off, or without a store', async () => {
    const dir = tempDir();
    expect(await startLocalSealer(config(dir, 'off'), new EmbeddedAuditStore(), deps())).toBeUndefined();
    expect(await startLocalSealer(config(dir, 'compliance'), undefined, deps())).toBeUndefined();
  });
});
