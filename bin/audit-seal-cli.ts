/**
 * @module audit-seal-cli
 * `npm run audit-log -- seal | verify | public-key` (docs/guide/audit.md, "How an auditor checks
 * it"), dispatched from bin/audit-log.ts:
 *
 * - `seal`: seals every closed window of the audit table on DynamoDB Local into `AUDIT_DIR` now
 *   (`npm start` seals its own embedded ring on its timer);
 * - `verify`: verifies the sealed windows of a directory (`--dir`, default `AUDIT_DIR`) or of the
 *   stack's bucket (`--bucket`), against the public key the auditor trusts: `--public-key FILE`,
 *   or the archive's copy checked against `--fingerprint` (pinned at deploy), or locally the local
 *   seal key; `--table NAME` also holds the live table's records against their sealed copies;
 * - `public-key`: prints the local seal key's public key (or `--kms-key`'s, or `--bucket`'s with
 *   `--fingerprint`) and its fingerprint.
 *
 * Exit codes: 0 everything verifies (or done), 1 a problem was found or a part failed, 2 usage.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { lateAfterMs, runAuditSeal } from '../lambdas/operator/audit-sealing.ts';
import { LocalMetricsStore } from '../lambdas/operator/local-metrics-store.ts';
import { fingerprintOf, keyIdOf } from '../lambdas/platform/audit/audit-chain.ts';
import { auditStoreKind } from '../lambdas/platform/audit/audit-store.ts';
import {
  type ArchiveReport,
  describeFinding,
  verifyArchive,
} from '../lambdas/platform/audit/audit-verify.ts';
import type { SealArchive } from '../lambdas/platform/audit/seal-archive.ts';
import { DirectorySealArchive } from '../lambdas/platform/audit/seal-archive-dir.ts';
import { publicKeyKey, SEAL_PREFIXES } from '../lambdas/platform/audit/seal-layout.ts';
import { localSealKeys } from '../lambdas/platform/audit/seal-signer-local.ts';
import { localSealerParts, sealerSettings } from '../lambdas/platform/audit/sealer-parts.ts';
import { type Config, loadConfig } from '../lambdas/platform/config.ts';
import { createLogger } from '../lambdas/platform/logger.ts';
import { createMetrics } from '../lambdas/platform/metrics/powertools.ts';
import { timeParameter } from './cli-time.ts';

/** The commands of this module. */
export const SEAL_COMMANDS = Object.freeze(['seal', 'verify', 'public-key'] as const);
export type SealCommand = (typeof SEAL_COMMANDS)[number];

export const SEAL_USAGE = `       npm run -s audit-log -- seal
       npm run -s audit-log -- verify [--from TIME] [--to TIME] [--dir DIR | --bucket NAME]
                                      [--public-key FILE | --fingerprint HEX] [--lock-mode MODE]
                                      [--table NAME --retention-days N] [--json]
       npm run -s audit-log -- public-key [--kms-key ARN | --bucket NAME --fingerprint HEX]

seal        seals every closed window of the audit table (AUDIT_TABLE on AWS_ENDPOINT_URL_DYNAMODB)
            into AUDIT_DIR now (npm start seals its own on a timer)
verify      verifies sealed windows: every record's hash, the chain, every seal's signature, each
            object's versions and lock, and with --table the live table against the sealed copies
  --from TIME, --to TIME   the windows starting in [from, to) (default: the last 30 days)
  --dir DIR                a directory or export laid out as the bucket (default: AUDIT_DIR)
  --bucket NAME            the stack's bucket (AuditBucketName), with the AWS credentials of the environment
  --public-key FILE        the trusted public key (PEM); else the archive's copy, which must match
  --fingerprint HEX        the fingerprint pinned at deploy (npm run audit-log -- public-key);
                           locally, without either, the local seal key (AUDIT_SEAL_KEY_FILE) is trusted
  --table NAME             also hold the audit table's records against their sealed copies,
  --retention-days N       with the stack's AUDIT_RETENTION_DAYS (gone after it: expired, not deleted)
  --lock-mode MODE         the Object Lock mode every object must have (default compliance)
  --json                   the report as JSON
public-key  prints the public key (PEM) and its fingerprint: the local seal key's, --kms-key's, or
            the copy in --bucket that has --fingerprint
`;

export interface SealCliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A failure with its exit code and a message for a person. */
class SealCliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

const OPTIONS = {
  from: { type: 'string' },
  to: { type: 'string' },
  dir: { type: 'string' },
  bucket: { type: 'string' },
  'public-key': { type: 'string' },
  fingerprint: { type: 'string' },
  table: { type: 'string' },
  'retention-days': { type: 'string' },
  'lock-mode': { type: 'string' },
  'kms-key': { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = {
  readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

/** A time option: ISO 8601, epoch ms, a date, or an age (`7d`). */
function timeOf(name: string, text: string, now: number): number {
  // As list's --since: an age or a date's start made a UTC time, else the text as written.
  const given = timeParameter('since', text, now);
  const ms = /^\d{1,16}$/.test(given) ? Number(given) : Date.parse(given);
  if (!Number.isFinite(ms)) throw new SealCliError(`--${name}: not a time: ${text.slice(0, 40)}`, 2);
  return ms;
}

function configOf(env: Readonly<Record<string, string | undefined>>): Config {
  try {
    return loadConfig({ ...env });
  } catch (error) {
    throw new SealCliError((error as Error).message, 2);
  }
}

async function s3Archive(bucket: string, config: Config, lockMode = 'compliance'): Promise<SealArchive> {
  if (lockMode !== 'compliance' && lockMode !== 'governance') {
    throw new SealCliError('--lock-mode: compliance or governance', 2);
  }
  const [{ S3Client }, { S3SealArchive }] = await Promise.all([
    import('@aws-sdk/client-s3'),
    import('../lambdas/platform/audit/seal-archive-s3.ts'),
  ]);
  return new S3SealArchive(new S3Client({ region: config.region }), bucket, lockMode);
}

/** The public key the archive's copy under `fingerprint` holds. */
async function pinnedKey(archive: SealArchive, fingerprint: string): Promise<KeyObject> {
  const wanted = fingerprint.toLowerCase().replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(wanted))
    throw new SealCliError('--fingerprint: 64 hex digits (sha256:… is fine)', 2);
  const body = await archive.read(publicKeyKey(wanted.slice(0, 32)));
  if (body === undefined) {
    const held = await archive.list(SEAL_PREFIXES.keys);
    throw new SealCliError(
      `no public key with that fingerprint in ${archive.where} (it holds ${held.length} key(s)): the seals were not made by the pinned key`,
      1,
    );
  }
  const key = createPublicKey(body);
  if (fingerprintOf(key) !== wanted) {
    throw new SealCliError(`the public key in ${archive.where} does not have the pinned fingerprint`, 1);
  }
  return key;
}

/** The key the seals must verify with. */
async function trustedKey(values: Values, archive: SealArchive, config: Config): Promise<KeyObject> {
  if (values['public-key'] !== undefined) {
    let key: KeyObject;
    try {
      key = createPublicKey(await readFile(values['public-key']));
    } catch (error) {
      throw new SealCliError(`--public-key: ${(error as Error).message}`, 2);
    }
    if (
      values.fingerprint !== undefined &&
      fingerprintOf(key) !== values.fingerprint.toLowerCase().replace(/^sha256:/, '')
    ) {
      throw new SealCliError('--public-key does not have the pinned --fingerprint', 1);
    }
    return key;
  }
  if (values.fingerprint !== undefined) return pinnedKey(archive, values.fingerprint);
  if (values.bucket !== undefined) {
    throw new SealCliError(
      '--bucket needs the key to trust: --fingerprint (pinned at deploy) or --public-key',
      2,
    );
  }
  const local = await localSealKeys(config.auditSealKeyFile, { create: false });
  if (local === undefined) {
    throw new SealCliError(
      `no local seal key at ${config.auditSealKeyFile}: give --public-key or --fingerprint`,
      2,
    );
  }
  return local.publicKey;
}

function printReport(report: ArchiveReport, keyId: string, io: SealCliIo, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify({ ...report, key_id: keyId }, null, 2)}\n`);
    return;
  }
  const lines = [
    `verify: ${report.where}, windows starting from ${report.from} to ${report.to}, key ${keyId}`,
    ...report.problems.map((problem) => `FAIL ${describeFinding(problem)}`),
    ...report.notices.map((notice) => `NOTE ${describeFinding(notice)}`),
    `${report.windows} windows and ${report.records} records verified` +
      (report.tableChecked === undefined ? '' : `, ${report.tableChecked} records held against the table`) +
      `; ${report.problems.length} problem(s)`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

async function verify(values: Values, config: Config, io: SealCliIo, now: number): Promise<number> {
  if (values.dir !== undefined && values.bucket !== undefined)
    throw new SealCliError('--dir or --bucket, not both', 2);
  const to = values.to === undefined ? now : timeOf('to', values.to, now);
  const from = values.from === undefined ? to - 30 * 86_400_000 : timeOf('from', values.from, now);
  if (from >= to) throw new SealCliError('--from must be before --to', 2);
  const archive =
    values.bucket === undefined
      ? new DirectorySealArchive(values.dir ?? config.auditDir)
      : await s3Archive(values.bucket, config, values['lock-mode']);
  const publicKey = await trustedKey(values, archive, config);
  let table: Parameters<typeof verifyArchive>[1]['table'];
  if (values.table !== undefined) {
    // The deployed retention, said by the auditor: a record gone before it was deleted, after it expired.
    const days = Number(values['retention-days']);
    if (!/^\d{1,4}$/.test(values['retention-days'] ?? '') || days < 1) {
      throw new SealCliError("--table needs --retention-days N: the stack's AUDIT_RETENTION_DAYS", 2);
    }
    const { DynamoDbAuditReader } = await import('../lambdas/platform/audit/audit-reader-dynamodb.ts');
    table = {
      source: DynamoDbAuditReader.fromConfig(config, values.table, config.dynamodbEndpoint),
      retentionDays: days,
      now,
    };
  }
  const late = lateAfterMs(sealerSettings(config, false));
  const report = await verifyArchive(archive, {
    from,
    to,
    publicKey,
    lateAfterMs: late,
    // Every window that should be sealed by now: older than two windows and the sealer's delay.
    sealedUntil: now - late,
    ...(table === undefined ? {} : { table }),
  });
  printReport(report, keyIdOf(publicKey), io, values.json === true);
  return report.problems.length === 0 ? 0 : 1;
}

async function seal(config: Config, io: SealCliIo): Promise<number> {
  if (auditStoreKind(config) !== 'dynamodb') {
    throw new SealCliError(
      'seal reads the audit table: set AUDIT_TABLE and AWS_ENDPOINT_URL_DYNAMODB (npm start seals its own embedded ring on its timer)',
      2,
    );
  }
  const parts = await localSealerParts(config, undefined);
  if (parts === undefined) throw new SealCliError('nothing to seal', 2);
  const logger = createLogger({ ...config, logLevel: 'SILENT' });
  const metrics = createMetrics({ ...config, runtime: 'local' }, { store: new LocalMetricsStore() });
  const run = await runAuditSeal({ parts, settings: sealerSettings(config, false), logger, metrics });
  const to =
    run.head === undefined ? 'nothing sealed yet' : `sealed up to ${new Date(run.head.end).toISOString()}`;
  io.stdout.write(
    `seal: ${run.sealed} window(s) sealed into ${config.auditDir}; ${to}` +
      (run.stopped === 'bound' ? ' (more follow: run it again)' : '') +
      (run.stopped === 'other_sealer' ? ' (another sealer moved the head: it seals on)' : '') +
      '\n',
  );
  return 0;
}

async function publicKeyCommand(values: Values, config: Config, io: SealCliIo): Promise<number> {
  let key: KeyObject;
  if (values['kms-key'] !== undefined) {
    const [{ KMSClient }, { KmsSealSigner }] = await Promise.all([
      import('@aws-sdk/client-kms'),
      import('../lambdas/platform/audit/seal-signer-kms.ts'),
    ]);
    key = await new KmsSealSigner(new KMSClient({ region: config.region }), values['kms-key']).publicKey();
  } else if (values.bucket !== undefined) {
    if (values.fingerprint === undefined) throw new SealCliError('--bucket needs --fingerprint', 2);
    key = await pinnedKey(await s3Archive(values.bucket, config), values.fingerprint);
  } else {
    const local = await localSealKeys(config.auditSealKeyFile, { create: false });
    if (local === undefined) {
      throw new SealCliError(
        `no local seal key at ${config.auditSealKeyFile} yet: npm start makes it at its first seal`,
        1,
      );
    }
    key = local.publicKey;
  }
  io.stdout.write(
    `${key.export({ type: 'spki', format: 'pem' }).toString()}fingerprint: sha256:${fingerprintOf(key)}\nkey id: ${keyIdOf(key)}\n`,
  );
  return 0;
}

/** Runs `command` with `argv` (its options); the exit code. */
export async function runSealCommand(
  command: SealCommand,
  argv: readonly string[],
  options: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly io: SealCliIo;
    readonly now?: () => number;
  },
): Promise<number> {
  const { io } = options;
  try {
    let values: Values;
    try {
      const parsed = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false });
      values = parsed.values as Values;
    } catch (error) {
      throw new SealCliError((error as Error).message.split('\n')[0] ?? 'bad options', 2);
    }
    const config = configOf(options.env);
    if (command === 'seal') return await seal(config, io);
    if (command === 'public-key') return await publicKeyCommand(values, config, io);
    return await verify(values, config, io, (options.now ?? Date.now)());
  } catch (error) {
    if (error instanceof SealCliError) {
      io.stderr.write(`audit-log ${command}: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`audit-log ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
