/**
 * @module platform/audit/sealer-parts
 * The sealer's parts for a configuration (docs/guide/audit.md, "Sealed" and "Locally"). Locally
 * (`npm start`'s timer, `npm run audit-log -- seal`): the records of the audit table on DynamoDB
 * Local when one is configured (its seal head item shared by every process), else the process's
 * embedded ring (the head read from the archive); windows written to `AUDIT_DIR`, signed with the
 * local key of `AUDIT_SEAL_KEY_FILE`. The stack's: sealer-parts-aws.ts.
 */
import type { Config } from '../config.ts';
import { pendingMaxMs } from '../function-timeout.ts';
import { type AuditRecord, auditExpiry } from './audit-record.ts';
import { type AuditStore, type AuditStoreConfig, auditStoreKind } from './audit-store.ts';
import { DirectorySealArchive } from './seal-archive-dir.ts';
import { ArchiveSealHead, DynamoDbSealHead } from './seal-head.ts';
import { localSealSigner } from './seal-signer-local.ts';
import type { SealerParts, SealerSettings } from './seal-windows.ts';

/** What the sealer reads of the configuration. */
export type SealerConfig = AuditStoreConfig &
  Pick<
    Config,
    | 'auditSealing'
    | 'auditSealMinutes'
    | 'auditLockDays'
    | 'auditRetentionDays'
    | 'auditPendingAfterSeconds'
    | 'maxTimeoutSeconds'
    | 'auditDir'
    | 'auditSealKeyFile'
  >;

/** The sealer's settings of a configuration; `locks`: whether its archive locks objects. */
export function sealerSettings(config: SealerConfig, locks: boolean): SealerSettings {
  return {
    minutes: config.auditSealMinutes,
    pendingAfterMs: pendingMaxMs(config),
    auditOn: config.audit !== 'off',
    retentionDays: config.auditRetentionDays,
    lockDays: locks ? (config.auditLockDays ?? config.auditRetentionDays) : undefined,
  };
}

/** Whether a local run seals: the audit has a store and sealing is not `off`. */
export function sealsLocally(config: SealerConfig): boolean {
  return config.auditSealing !== 'off' && auditStoreKind(config) !== 'none';
}

/**
 * The local sealer's parts: the table (DynamoDB Local) when configured, else `ring` (the
 * process's embedded store; `undefined`: nothing to seal).
 */
export async function localSealerParts(
  config: SealerConfig,
  ring: AuditStore | undefined,
  now: () => number = Date.now,
): Promise<SealerParts | undefined> {
  const archive = new DirectorySealArchive(config.auditDir);
  const signer = localSealSigner(config.auditSealKeyFile);
  if (auditStoreKind(config) === 'dynamodb') {
    const table = config.auditTable as string;
    const [{ DynamoDbAuditReader }, { DynamoDbAuditStore, auditTableClient }] = await Promise.all([
      import('./audit-reader-dynamodb.ts'),
      import('./audit-store-dynamodb.ts'),
    ]);
    const writer = DynamoDbAuditStore.fromConfig(config, table, config.dynamodbEndpoint);
    return {
      source: DynamoDbAuditReader.fromConfig(config, table, config.dynamodbEndpoint),
      complete: completing(writer, config),
      heads: new DynamoDbSealHead(auditTableClient(config, config.dynamodbEndpoint), table),
      archive,
      signer,
      now,
    };
  }
  if (ring === undefined) return undefined;
  return {
    source: ring,
    complete: completing(ring, config),
    heads: new ArchiveSealHead(archive),
    archive,
    signer,
    now,
  };
}

/** Completes a stale record through the writers' own conditional end. */
export function completing(
  writer: Pick<AuditStore, 'finish'>,
  config: Pick<Config, 'auditRetentionDays'>,
): (record: AuditRecord) => Promise<boolean> {
  return (record) => writer.finish(record, auditExpiry(Date.parse(record.time), config.auditRetentionDays));
}
