/**
 * @module platform/audit/sealer-parts-aws
 * The stack's sealer parts (the `audit-sealer` function): the audit table (strongly consistent
 * Queries of its base table, the seal head item, completions through the writers' conditional
 * end), the Object Lock bucket `AUDIT_BUCKET` and the KMS key `AUDIT_SEAL_KEY_ID`, through the AWS
 * SDK's S3 and KMS clients.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config.ts';
import { DynamoDbAuditReader } from './audit-reader-dynamodb.ts';
import { auditTableClient, DynamoDbAuditStore } from './audit-store-dynamodb.ts';
import { S3SealArchive } from './seal-archive-s3.ts';
import { DynamoDbSealHead } from './seal-head.ts';
import { KmsSealSigner } from './seal-signer-kms.ts';
import type { SealerParts } from './seal-windows.ts';
import { completing, type SealerConfig } from './sealer-parts.ts';

/** What the stack's sealer reads besides the local one's. */
export type AwsSealerConfig = SealerConfig & Pick<Config, 'auditBucket' | 'auditSealKeyId'>;

/** The stack's sealer parts; a missing table, bucket or key is a deploy error, said as such. */
export function awsSealerParts(
  config: AwsSealerConfig,
  clients: { s3?: S3Client; kms?: KMSClient } = {},
): SealerParts {
  const { auditTable: table, auditBucket: bucket, auditSealKeyId: keyId } = config;
  if (table === undefined || bucket === undefined || keyId === undefined) {
    throw new Error('the sealer needs AUDIT_TABLE, AUDIT_BUCKET and AUDIT_SEAL_KEY_ID (the stack sets them)');
  }
  const mode = config.auditSealing === 'governance' ? 'governance' : 'compliance';
  return {
    source: new DynamoDbAuditReader(auditTableClient(config, config.dynamodbEndpoint), table),
    complete: completing(DynamoDbAuditStore.fromConfig(config, table, config.dynamodbEndpoint), config),
    heads: new DynamoDbSealHead(auditTableClient(config, config.dynamodbEndpoint), table),
    archive: new S3SealArchive(clients.s3 ?? new S3Client({ region: config.region }), bucket, mode),
    signer: new KmsSealSigner(clients.kms ?? new KMSClient({ region: config.region }), keyId),
    now: Date.now,
  };
}
